// `modelgate sim --listen ADDR [--seed N]`: the simulator as a standalone HTTP upstream.

import * as v from "valibot";
import { ListenSchema } from "../config/schema.ts";
import { splitListen } from "../http/listener.ts";
import { log } from "../log.ts";
import { startSimServer } from "../sim/server.ts";
import { parse, UsageError } from "./args.ts";

export async function simCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { listen: { type: "string" }, seed: { type: "string" } },
    "sim",
  );
  if (positionals.length > 0) throw new UsageError(`sim: unexpected argument "${positionals[0]}"`);
  const listenAddress = values.listen ?? "127.0.0.1:8081";
  if (!v.is(ListenSchema, listenAddress))
    throw new UsageError(`--listen: expected HOST:PORT such as 127.0.0.1:8081, got "${listenAddress}"`);
  const seed = values.seed === undefined ? 0 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new UsageError(`--seed: expected a whole number, got "${values.seed}"`);
  const sim = startSimServer({ ...splitListen(listenAddress), seed });
  log("info", "simulator listening", { url: sim.url, seed });
  const stop = async () => {
    await sim.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
}

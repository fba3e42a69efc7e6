// `modelgate sim --listen ADDR [--seed N] [--profile FILE.toml] [--fault KEY=VALUE]...`: the
// simulator as a standalone HTTP upstream, misbehaving per a fault profile (src/config/channels.ts
// FaultProfileSchema): a TOML file of profile fields, each overridable by a --fault flag.
import * as v from "valibot";
import { log } from "../base/log.ts";
import { describeIssues } from "../base/validation.ts";
import { type FaultProfile, FaultProfileSchema } from "../config/channels.ts";
import { readTomlFile } from "../config/load.ts";
import { ListenSchema, splitListen } from "../config/schema.ts";
import { startSimServer } from "../sim/server.ts";
import { parse } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage: modelgate sim [--listen HOST:PORT] [--seed N] [--profile FILE.toml] [--fault KEY=VALUE]...
  runs the upstream simulator on its own (OpenAI Responses, Chat Completions, Anthropic Messages, Images)
  --listen   where to listen (default 127.0.0.1:8081); without arguments it starts there
  --seed     the seed of its answers (default 0)
  --profile  a TOML file of fault fields (rate_500, rate_429, ...), see docs/simulator.md
  --fault    one fault field, overriding the profile, e.g. --fault rate_500=0.5`;

/** The profile from an optional TOML file and `KEY=VALUE` overrides (numbers, true/false). */
export function profileFrom(file: string | undefined, faults: readonly string[]): FaultProfile {
  const fields: Record<string, unknown> =
    file === undefined ? {} : readTomlFile(file, file, (message) => new UsageError(`--profile: ${message}`));
  for (const fault of faults) {
    const at = fault.indexOf("=");
    if (at < 1) throw new UsageError(`--fault: expected KEY=VALUE such as rate_500=0.5, got "${fault}"`);
    const raw = fault.slice(at + 1);
    fields[fault.slice(0, at)] = raw === "true" ? true : raw === "false" ? false : Number(raw);
  }
  const parsed = v.safeParse(FaultProfileSchema, fields);
  if (!parsed.success) throw new UsageError(`fault profile: ${describeIssues(parsed.issues)}`);
  return parsed.output;
}

export async function simCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    {
      listen: { type: "string" },
      seed: { type: "string" },
      profile: { type: "string" },
      fault: { type: "string", multiple: true },
    },
    "sim",
  );
  if (positionals.length > 0) throw new UsageError(`sim: unexpected argument "${positionals[0]}"`);
  const listenAddress = values.listen ?? "127.0.0.1:8081";
  if (!v.is(ListenSchema, listenAddress))
    throw new UsageError(`--listen: expected HOST:PORT such as 127.0.0.1:8081, got "${listenAddress}"`);
  const seed = values.seed === undefined ? 0 : Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new UsageError(`--seed: expected a whole number, got "${values.seed}"`);
  const profile = profileFrom(values.profile, values.fault ?? []);
  const sim = startSimServer({ ...splitListen(listenAddress), seed, profile });
  const stop = async () => {
    await sim.stop();
    process.exit(0);
  };
  // Before the ready line, as serve does: a signal sent on reading it must find the handler.
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  log("info", "simulator listening", { url: sim.url, seed, profile });
}

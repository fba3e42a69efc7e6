// The set-up the official-SDK media tests share: a simulator served over HTTP, a gateway with two
// channels to it — one in-process simulator channel, one channel of `kind` over HTTP — and the
// official openai client on the gateway. Registers its own beforeAll/afterAll in the calling file.
import { afterAll, beforeAll } from "bun:test";
import OpenAI from "openai";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { type RunningGateway, startGateway } from "./gateway.ts";

export interface SdkRig {
  readonly gw: RunningGateway;
  readonly sim: SimServer;
  readonly client: OpenAI;
}

/** The rig, ready inside the tests: `inProcess` models on the sim channel, `overHttp` on a `kind` channel. */
export function sdkRig(channels: {
  inProcess: readonly string[];
  overHttp: readonly string[];
  kind: "openai-chat" | "openai-images";
}): SdkRig {
  let rig: SdkRig | undefined;
  const names = (models: readonly string[]) => models.map((m) => JSON.stringify(m)).join(", ");
  beforeAll(async () => {
    const sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 5 });
    const gw = await startGateway({
      config: `
[[channels]]
kind = "sim"
name = "in-process"
models = [${names(channels.inProcess)}]

[[channels]]
kind = "${channels.kind}"
name = "over-http"
base_url = "${sim.url}/v1"
models = [${names(channels.overHttp)}]
`,
    });
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    rig = { gw, sim, client };
  }, 30_000);
  afterAll(async () => {
    await rig?.gw.dispose();
    await rig?.sim.stop();
  }, 30_000);
  const ready = (): SdkRig => {
    if (rig === undefined) throw new Error("the SDK rig is used before its beforeAll ran");
    return rig;
  };
  return {
    get gw() {
      return ready().gw;
    },
    get sim() {
      return ready().sim;
    },
    get client() {
      return ready().client;
    },
  };
}

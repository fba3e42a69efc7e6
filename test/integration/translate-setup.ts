// Shared set-up for the translation tests: one gateway whose three channels (Responses, Chat and
// Messages over HTTP) all point at one HTTP simulator. Each channel serves a different public
// model, and every channel maps its model to the same upstream id, so the simulator gives the
// same answer whichever pair of protocols a request crosses.
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

export type Upstream = "responses" | "chat" | "messages";

/** The public model each upstream protocol serves in the translation rig. */
export const MODEL_BY_UPSTREAM: Readonly<Record<Upstream, string>> = {
  responses: "modelx-5.4",
  chat: "modelx-5.2",
  messages: "modelz-sonnet-4-6",
};

export const UPSTREAMS: readonly Upstream[] = ["responses", "chat", "messages"];

export interface TranslateRig {
  gw: RunningGateway;
  sim: SimServer;
  stop(): Promise<void>;
}

export function translateConfig(simUrl: string, extra = ""): string {
  return `${extra}
[[channels]]
kind = "openai-responses"
name = "up-responses"
base_url = "${simUrl}/v1"
models = ["${MODEL_BY_UPSTREAM.responses}"]
model_map = { "${MODEL_BY_UPSTREAM.responses}" = "shared-upstream-model" }

[[channels]]
kind = "openai-chat"
name = "up-chat"
base_url = "${simUrl}/v1"
models = ["${MODEL_BY_UPSTREAM.chat}"]
model_map = { "${MODEL_BY_UPSTREAM.chat}" = "shared-upstream-model" }

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${simUrl}"
models = ["${MODEL_BY_UPSTREAM.messages}", "modelz-opus-4-7"]
model_map = { "${MODEL_BY_UPSTREAM.messages}" = "shared-upstream-model" }
`;
}

export async function startTranslateRig(extra = ""): Promise<TranslateRig> {
  const sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 11 });
  const gw = await startGateway({ config: translateConfig(sim.url, extra) });
  return {
    gw,
    sim,
    async stop() {
      await gw.dispose();
      await sim.stop();
    },
  };
}

// Shared set-up for the text tests: a gateway whose channels are the three HTTP adapters pointed at
// an HTTP simulator, a gateway with the default in-process simulator channel, and SSE helpers.
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

export interface TextRig {
  /** Gateway whose channels are openai-responses, openai-chat and anthropic over HTTP. */
  http: RunningGateway;
  /** Gateway with the default in-process `sim` channel. */
  inproc: RunningGateway;
  sim: SimServer;
  stop(): Promise<void>;
}

export function httpChannelsConfig(simUrl: string, extra = ""): string {
  return `
${extra}
[[channels]]
kind = "openai-responses"
name = "oa-responses"
base_url = "${simUrl}/v1"
api_key_env = "SIM_UPSTREAM_KEY"
models = ["modelx-*"]

[[channels]]
kind = "openai-chat"
name = "oa-chat"
base_url = "${simUrl}/v1"
api_key_env = "SIM_UPSTREAM_KEY"
models = ["modelx-*"]

[[channels]]
kind = "anthropic"
name = "anthropic"
base_url = "${simUrl}"
api_key_env = "SIM_UPSTREAM_KEY"
models = ["modelz-*"]
`;
}

export async function startTextRig(extraConfig = ""): Promise<TextRig> {
  const sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 7 });
  const env = { SIM_UPSTREAM_KEY: "sk-upstream-secret" };
  const [http, inproc] = await Promise.all([
    startGateway({ config: httpChannelsConfig(sim.url, extraConfig), env }),
    startGateway({ config: `${extraConfig}\n[sim]\nseed = 7\n` }),
  ]);
  return {
    http,
    inproc,
    sim,
    async stop() {
      await Promise.all([http.dispose(), inproc.dispose()]);
      await sim.stop();
    },
  };
}

export function post(
  gw: RunningGateway,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  const auth: Record<string, string> = path.startsWith("/v1/messages")
    ? { "x-api-key": gw.key ?? "", "anthropic-version": "2023-06-01" }
    : { authorization: `Bearer ${gw.key ?? ""}` };
  return fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

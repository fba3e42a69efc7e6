// Shared set-up for the resilience tests: `modelgate sim` processes with fault profiles (spawned
// from the compiled binary), their counters, gateway configs with [[channels]] pointing at them,
// the usage records in the gateway's SQLite file, and a node:http client (not limited to 256
// requests in flight the way this process's fetch is).

import { Database } from "bun:sqlite";
import http from "node:http";
import type { SimStats } from "../../src/sim/faults.ts";
import { binary, type RunningGateway } from "../helpers/gateway.ts";

export interface SimProcess {
  url: string;
  stats(): Promise<SimStats>;
  setProfile(profile: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `modelgate sim` on a free port with `--fault KEY=VALUE` flags. */
export async function startSim(faults: Record<string, number | boolean> = {}): Promise<SimProcess> {
  const flags = Object.entries(faults).flatMap(([k, v]) => ["--fault", `${k}=${v}`]);
  const proc = Bun.spawn([binary(), "sim", "--listen", "127.0.0.1:0", "--seed", "3", ...flags], {
    stdout: "ignore",
    stderr: "pipe",
    stdin: "ignore",
  });
  const reader = proc.stderr.getReader();
  let text = "";
  const deadline = Date.now() + 10_000;
  let url: string | undefined;
  while (url === undefined) {
    if (Date.now() > deadline) throw new Error(`sim did not start: ${text}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`sim exited: ${text}`);
    text += new TextDecoder().decode(value);
    url = /"msg":"simulator listening","url":"([^"]+)"/.exec(text)?.[1];
  }
  reader.releaseLock();
  void proc.stderr.pipeTo(new WritableStream()).catch(() => undefined);
  const base = url;
  return {
    url: base,
    stats: async () => (await (await fetch(`${base}/sim/stats`)).json()) as SimStats,
    async setProfile(profile) {
      const r = await fetch(`${base}/sim/profile`, { method: "PUT", body: JSON.stringify(profile) });
      if (!r.ok) throw new Error(`PUT /sim/profile: ${r.status} ${await r.text()}`);
    },
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** A `[[channels]]` entry of kind openai-chat pointing at a simulator. */
export function chatChannel(name: string, sim: SimProcess, extra = ""): string {
  return `
[[channels]]
kind = "openai-chat"
name = "${name}"
base_url = "${sim.url}/v1"
models = ["modelx-*"]
${extra}
`;
}

export const FAST_ROUTING = `
[routing]
backoff_base_ms = 20
backoff_max_ms = 100
max_retry_after_ms = 3000
`;

export interface UsageRow {
  request_id: string;
  status: number;
  channels: string;
  output_tokens: number;
  input_tokens: number;
  stream: number;
}

/** The usage records written so far, oldest first. */
export function usageRecords(gw: RunningGateway): UsageRow[] {
  const db = new Database(gw.dbUrl.replace(/^sqlite:\/\//, ""), { readonly: true });
  try {
    return db
      .query(
        "SELECT request_id, status, channels, output_tokens, input_tokens, stream FROM usage_records ORDER BY id",
      )
      .all() as UsageRow[];
  } finally {
    db.close();
  }
}

/** Waits until `count` usage records exist (they are durable before the last byte, but read by another process). */
export async function waitForRecords(gw: RunningGateway, count: number, ms = 5000): Promise<UsageRow[]> {
  const until = Date.now() + ms;
  let rows = usageRecords(gw);
  while (rows.length < count && Date.now() < until) {
    await Bun.sleep(25);
    rows = usageRecords(gw);
  }
  return rows;
}

export function chatBody(stream: boolean, text = "Tell me a story."): string {
  return JSON.stringify({
    model: "modelx-5.4-mini",
    messages: [{ role: "user", content: text }],
    max_tokens: 400,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

export function chat(gw: RunningGateway, stream: boolean, text?: string): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${gw.key ?? ""}` },
    body: chatBody(stream, text),
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

export interface RawAnswer {
  status: number;
  body: string;
}

/** A POST over node:http; `onData` sees each chunk (e.g. to notice the first event). */
export function rawPost(
  url: string,
  key: string,
  body: string,
  onData?: (chunk: string) => void,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${key}`,
          "content-length": String(Buffer.byteLength(body)),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
          onData?.(chunk);
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The JSON payloads of a Chat SSE body (without `[DONE]`). */
export function chatEvents(body: string): Record<string, unknown>[] {
  return body
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

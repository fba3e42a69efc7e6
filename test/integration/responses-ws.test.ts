// The Responses WebSocket mode through the compiled gateway: two response.create turns on one
// connection with store:false and previous_response_id (the second sees the first's context, on
// every upstream protocol), frames equal to the SSE events, billing per response.create, the
// nested error frame rendered from the error table and counted by kind, a revoked key refused on
// the next frame, a refused upgrade, and the connection lifetime limit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { keyAccepted, waitFor } from "../helpers/wait.ts";
import { post } from "./text-setup.ts";
import { MODEL_BY_UPSTREAM, startTranslateRig, type TranslateRig, UPSTREAMS } from "./translate-setup.ts";

type Obj = Record<string, unknown>;

let rig: TranslateRig;
beforeAll(async () => {
  rig = await startTranslateRig("[endpoints]\nwebsocket_max_seconds = 600\n");
}, 30_000);
afterAll(async () => {
  await rig?.stop();
}, 30_000);

/** A WebSocket client that collects frames and can wait for the next one matching a test. */
class Client {
  readonly frames: Obj[] = [];
  readonly ws: WebSocket;
  closed = false;
  #waiters: (() => void)[] = [];

  constructor(url: string, key: string) {
    this.ws = new WebSocket(`${url.replace("http://", "ws://")}/v1/responses`, {
      headers: { authorization: `Bearer ${key}`, "openai-beta": "responses_websockets=2026-02-06" },
    } as unknown as string[]);
    this.ws.onmessage = (e) => {
      this.frames.push(JSON.parse(String(e.data)) as Obj);
      for (const w of this.#waiters.splice(0)) w();
    };
    this.ws.onclose = () => {
      this.closed = true;
      for (const w of this.#waiters.splice(0)) w();
    };
  }

  opened(): Promise<boolean> {
    return new Promise((resolve) => {
      this.ws.onopen = () => resolve(true);
      this.ws.onerror = () => resolve(false);
    });
  }

  /** Sends a frame and waits for its terminal frame (completed, incomplete, failed or error). */
  async turn(frame: Obj): Promise<Obj[]> {
    const from = this.frames.length;
    this.ws.send(JSON.stringify({ type: "response.create", ...frame }));
    const terminal = (f: Obj) =>
      ["response.completed", "response.incomplete", "response.failed", "error"].includes(String(f.type));
    while (!this.frames.slice(from).some(terminal) && !this.closed) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
    return this.frames.slice(from);
  }

  close(): void {
    this.ws.close();
  }
}

function completed(frames: Obj[]): Obj {
  const done = frames.find((f) => f.type === "response.completed");
  if (done === undefined) throw new Error(`no response.completed in ${JSON.stringify(frames.slice(-2))}`);
  return done.response as Obj;
}

function text(response: Obj): string {
  return (response.output as Obj[])
    .filter((i) => i.type === "message")
    .flatMap((i) => (i.content as Obj[]).map((c) => String(c.text)))
    .join("");
}

const WEATHER = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const TOOLS = [{ type: "function", name: "get_weather", parameters: WEATHER }];

describe.each(UPSTREAMS.map((u) => ({ upstream: u, model: MODEL_BY_UPSTREAM[u] })))(
  "$upstream upstream",
  ({ model }) => {
    test("two turns on one connection: previous_response_id with store:false carries the first turn's context", async () => {
      const client = new Client(rig.gw.url, rig.gw.key ?? "");
      expect(await client.opened()).toBe(true);
      const firstInput = [
        {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "Call get_weather for me." }],
        },
      ];
      const common = {
        model,
        store: false,
        tools: TOOLS,
        instructions: "Be brief.",
        include: [],
        reasoning: null,
      };
      const first = await client.turn({ ...common, input: firstInput });
      expect(first.every((f) => f.type !== "error")).toBe(true);
      expect(first.filter((f) => f.type === "response.output_item.done").length).toBeGreaterThan(0);
      const one = completed(first);
      const call = (one.output as Obj[]).find((i) => i.type === "function_call");
      expect(call?.name).toBe("get_weather");
      const result = { type: "function_call_output", call_id: call?.call_id, output: "sunny, 21 C" };
      const second = completed(
        await client.turn({ ...common, previous_response_id: one.id, input: [result] }),
      );
      client.close();
      expect(text(second)).toContain("The tool returned");
      // The same conversation sent whole over HTTP gets the same (deterministic) answer and usage.
      const http = await post(rig.gw, "/v1/responses", {
        ...common,
        input: [...firstInput, ...(one.output as Obj[]), result],
      });
      const whole = (await http.json()) as Obj;
      expect(text(second)).toBe(text(whole));
      expect((second.usage as Obj).input_tokens).toBe((whole.usage as Obj).input_tokens);
      expect(Number((second.usage as Obj).input_tokens)).toBeGreaterThan(
        Number((one.usage as Obj).input_tokens),
      );
    });
  },
);

test("each response.create is billed like an HTTP request", async () => {
  const balance = async () => {
    const r = await fetch(`${rig.gw.url}/v1/dashboard/billing/balance`, {
      headers: { authorization: `Bearer ${rig.gw.key}` },
    });
    return JSON.stringify(await r.json());
  };
  const before = await balance();
  const client = new Client(rig.gw.url, rig.gw.key ?? "");
  await client.opened();
  completed(await client.turn({ model: MODEL_BY_UPSTREAM.messages, input: "Say something long." }));
  client.close();
  const after = await waitFor("the turn to be billed", async () => {
    const now = await balance();
    return now !== before && now;
  });
  expect(after).not.toBe(before);
});

test("errors are nested frames; an unknown previous_response_id and an unknown model are refused", async () => {
  const client = new Client(rig.gw.url, rig.gw.key ?? "");
  await client.opened();
  const unknown = (await client.turn({ model: "modelx-4", input: "hi" })).at(-1) as Obj;
  expect(unknown).toMatchObject({ type: "error", status: 400, error: { code: "model_not_found" } });
  const missing = (
    await client.turn({ model: MODEL_BY_UPSTREAM.chat, input: "hi", previous_response_id: "resp_nope" })
  ).at(-1) as Obj;
  expect(missing).toMatchObject({
    type: "error",
    status: 400,
    error: { code: "previous_response_not_found" },
  });
  const warm = completed(
    await client.turn({ model: MODEL_BY_UPSTREAM.chat, input: "Remember me.", generate: false }),
  );
  expect(warm.output).toEqual([]);
  const after = completed(
    await client.turn({ model: MODEL_BY_UPSTREAM.chat, input: "Go on.", previous_response_id: warm.id }),
  );
  expect(text(after).length).toBeGreaterThan(0);
  client.close();
});

test("error frames are rendered from the error table and counted in modelgate_errors_total", async () => {
  const scrape = async () => {
    const text = await (await fetch(`${rig.gw.url}/metrics`)).text();
    const line = text
      .split("\n")
      .find((l) => l.startsWith('modelgate_errors_total{kind="invalid_request",status="400"}'));
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };
  const before = await scrape();
  const client = new Client(rig.gw.url, rig.gw.key ?? "");
  await client.opened();
  const from = client.frames.length;
  client.ws.send(JSON.stringify({ type: "response.cancel", stream_id: "s1" }));
  while (client.frames.length === from && !client.closed) await Bun.sleep(10);
  client.close();
  // The table's invalid_request row: status 400, OpenAI type invalid_request_error; the code given.
  expect(client.frames.at(-1)).toEqual({
    type: "error",
    status: 400,
    error: {
      type: "invalid_request_error",
      code: "unsupported_frame",
      message: expect.stringContaining("response.cancel"),
      param: null,
    },
    stream_id: "s1",
  });
  expect(await scrape()).toBe(before + 1);
});

test("a revoked key's open connection is closed with the refusal as its last frame; a bad key cannot upgrade", async () => {
  const created = await rig.gw.cli([
    "keys",
    "create",
    "--account",
    "default",
    "--group",
    "default",
    "--name",
    "ws",
  ]);
  const key = created.stdout.trim();
  const rows = JSON.parse((await rig.gw.cli(["keys", "list", "--json"])).stdout) as Obj[];
  const id = String(rows.find((r) => r.name === "ws")?.id);
  await keyAccepted(rig.gw.url, key);
  const client = new Client(rig.gw.url, key);
  expect(await client.opened()).toBe(true);
  completed(await client.turn({ model: MODEL_BY_UPSTREAM.responses, input: "hello" }));
  const from = client.frames.length;
  // Closed without waiting for a next frame (src/http/responses-ws.ts checks open connections' keys).
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    client.ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
  });
  expect((await rig.gw.cli(["keys", "revoke", id])).code).toBe(0);
  expect(await closed).toEqual({ code: 1008, reason: "API key revoked" });
  expect(client.frames.slice(from).at(-1)).toMatchObject({ type: "error", status: 401 });
  const bad = new Client(rig.gw.url, "sk-not-a-key");
  expect(await bad.opened()).toBe(false);
}, 20_000);

describe("lifetime limit", () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ config: "[endpoints]\nwebsocket_max_seconds = 1\n" });
  }, 30_000);
  afterAll(async () => {
    await gw?.dispose();
  });

  test("the connection ends with websocket_connection_limit_reached", async () => {
    const client = new Client(gw.url, gw.key ?? "");
    expect(await client.opened()).toBe(true);
    completed(await client.turn({ model: "modelx-5.5", input: "hi" }));
    for (let i = 0; i < 60 && !client.closed; i++) await Bun.sleep(50);
    expect(client.closed).toBe(true);
    expect(client.frames.at(-1)).toMatchObject({
      type: "error",
      error: { code: "websocket_connection_limit_reached" },
    });
  });
});

// The usage journal's check of replayed lines (src/store/usage/record-check.ts) against records as
// the pipeline builds them, through the compiled binary: one request of every endpoint kind (chat,
// a Responses stream under an alias, Messages with a hosted tool, a failed upstream, a cache hit,
// embeddings, an image, a transcription, a translation, speech) settles while another process holds
// the store's write lock, so each record is only in the journal; every journal line passes the
// check, and after kill -9 and a restart every record is stored once and none is set aside.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseJournalLines } from "../../src/billing/journal.ts";
import { usageRecordProblem } from "../../src/store/usage/record-check.ts";
import { wavFile } from "../helpers/audio.ts";
import { type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";
import { type RecordingUpstream, startRecordingUpstream } from "../helpers/recording-upstream.ts";
import { waitFor } from "../helpers/wait.ts";

const config = (upstreamUrl: string) => `
[sim]
seed = 11

[aliases.models]
"gpt-4o" = "modelx-5.5"

[cache.groups.default]
ttl_seconds = 600
hit_cost_fraction = "0.5"

[routing]
max_attempts = 1

[[channels]]
kind = "sim"
name = "sim"
models = ["modelx-*"]

[[channels]]
kind = "anthropic"
name = "up-messages"
base_url = "${upstreamUrl}"
models = ["modelz-sonnet-4-6"]
`;

const gateways: RunningGateway[] = [];
const dirs: string[] = [];
let upstream: RecordingUpstream | undefined;
afterAll(async () => {
  for (const gw of gateways) await gw.dispose();
  await upstream?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test("every endpoint kind's record passes the journal check and is replayed once after kill -9", async () => {
  upstream = startRecordingUpstream((request) =>
    JSON.stringify(request.json).includes("please fail")
      ? new Response("overloaded", { status: 500 })
      : Response.json({
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "upstream-model",
          content: [{ type: "text", text: "Sunny." }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 100, output_tokens: 20, server_tool_use: { web_search_requests: 3 } },
        }),
  );
  const dir = tempDir();
  dirs.push(dir);
  const first = await startGateway({ dir, config: config(upstream.url) });
  gateways.push(first);
  const key = first.key;
  if (!key) throw new Error(`no bootstrap key:\n${first.logs()}`);
  const auth = { authorization: `Bearer ${key}` };
  const json = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${first.url}${path}`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "anthropic-version": "2023-06-01", ...headers },
      body: JSON.stringify(body),
    });
  const form = (path: string, fields: Record<string, string>) => {
    const body = new FormData();
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    body.append("file", new Blob([wavFile(2)], { type: "audio/wav" }), "speech.wav");
    return fetch(`${first.url}${path}`, { method: "POST", headers: auth, body });
  };
  // Text requests other than the cached one neither read nor write the cache (it lives in the
  // store's file, whose write lock is taken below).
  const noStore = { "cache-control": "no-store" };
  const cachedChat = {
    model: "modelx-5.4",
    messages: [{ role: "user", content: "a cached question" }],
    max_tokens: 50,
  };
  // Before the lock: the answer to be hit is stored in the cache (and the store thread started).
  await waitFor("the cache to answer a hit", async () => {
    const res = await json("/v1/chat/completions", cachedChat);
    await res.text();
    return res.headers.get("x-modelgate-cache") === "hit";
  });

  const locker = new Database(join(dir, "modelgate.db"));
  locker.run("PRAGMA busy_timeout = 10000");
  locker.run("BEGIN IMMEDIATE");
  const ids: Record<string, string> = {};
  const sent = async (kind: string, answer: Promise<Response>, status = 200) => {
    const res = await answer;
    await res.arrayBuffer();
    expect({ kind, status: res.status }).toEqual({ kind, status });
    ids[kind] = res.headers.get("x-request-id") ?? "";
  };
  try {
    await sent(
      "chat",
      json(
        "/v1/chat/completions",
        { model: "modelx-5.4", messages: [{ role: "user", content: "hi" }], max_tokens: 30, user: "u-1" },
        noStore,
      ),
    );
    await sent(
      "alias stream",
      json(
        "/v1/responses",
        { model: "gpt-4o", input: "hello", max_output_tokens: 40, stream: true },
        noStore,
      ),
    );
    const messages = {
      model: "modelz-sonnet-4-6",
      max_tokens: 200,
      messages: [{ role: "user", content: "Weather?" }],
      tools: [{ type: "web_search_20250305", name: "web_search", max_uses: 5 }],
    };
    await sent("hosted tool", json("/v1/messages", messages, noStore));
    await sent(
      "failed upstream",
      json("/v1/messages", { ...messages, messages: [{ role: "user", content: "please fail" }] }, noStore),
      502,
    );
    await sent("cache hit", json("/v1/chat/completions", cachedChat));
    await sent("embeddings", json("/v1/embeddings", { model: "modelx-embed-3-small", input: ["a", "b"] }));
    await sent(
      "image",
      json("/v1/images/generations", { model: "modelx-image-2", prompt: "a red fox", size: "64x64" }),
    );
    await sent("transcription", form("/v1/audio/transcriptions", { model: "modelx-transcribe-1" }));
    await sent("translation", form("/v1/audio/translations", { model: "modelx-transcribe-1" }));
    await sent(
      "speech",
      json("/v1/audio/speech", { model: "modelx-tts-1", input: "Fifteen letters", voice: "alloy" }),
    );

    // Each record is in the journal only, as the pipeline built it: each passes the check.
    const journal = join(dir, "modelgate.db-usage.log");
    const lines = parseJournalLines<{ requestId: string; endpoint: string }>(
      readFileSync(journal, "utf8"),
      journal,
    );
    const mine = new Set(Object.values(ids));
    const journaled = lines.filter((line) => mine.has(line.item.requestId));
    expect(journaled.map((line) => line.item.requestId).sort()).toEqual([...mine].sort());
    const problems = journaled
      .map((line) => [line.item.endpoint, usageRecordProblem(line.item)])
      .filter(([, problem]) => problem !== undefined);
    expect(problems).toEqual([]);
    first.proc.kill("SIGKILL");
    await first.proc.exited;
  } finally {
    locker.run("ROLLBACK");
    locker.close();
  }

  // The restart replays the journal: every record stored once, none set aside.
  const second = await startGateway({ dir, config: config(upstream.url) });
  gateways.push(second);
  const db = new Database(join(dir, "modelgate.db"), { readonly: true });
  try {
    const count = db.query(
      "SELECT count(*) AS n, max(cache_hit) AS hit FROM usage_records WHERE request_id = ?",
    );
    for (const [kind, id] of Object.entries(ids)) {
      expect({ kind, stored: (count.get(id) as { n: number }).n }).toEqual({ kind, stored: 1 });
    }
    expect((count.get(ids["cache hit"] ?? "") as { hit: number }).hit).toBe(1);
  } finally {
    db.close();
  }
  expect(existsSync(join(dir, "modelgate.db-usage.log.rejected"))).toBe(false);
}, 60_000);

// The live request log: one line per request from the feed, filters by key, model and status,
// pause (new requests counted, not shown), scroll back, the feed's connection line, 80×24 fit.
import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { cleanup } from "ink-testing-library";
import {
  expectFits,
  FakeApi,
  FakeFeed,
  KEYS,
  lines,
  press,
  renderApp,
  requestEvent,
  shows,
  type,
} from "./tui-fixture.tsx";

setDefaultTimeout(30_000);
afterEach(() => cleanup());

function start() {
  const feed = new FakeFeed();
  const ui = renderApp(new FakeApi(), feed, "log");
  return { feed, ui };
}

const rows = (ui: ReturnType<typeof start>["ui"]) => lines(ui).filter((l) => /^\d\d:\d\d:\d\d /.test(l));

test("each request is a line: time, status, endpoint, key, model, tokens, cost, latency", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  expect(lines(ui).join("\n")).toContain("live feed connected");
  feed.push(requestEvent({ at: "2026-11-21T10:01:07.000Z", key_name: "ci-bot" }));
  feed.push(
    requestEvent({
      at: "2026-11-21T10:01:08.000Z",
      endpoint: "/v1/images/generations",
      model: "modelx-image-2",
      generations: 4,
      cost_nanos: 160_000_000,
      latency_ms: 3,
    }),
  );
  const frame = await shows(ui, "2 request(s)");
  expect(frame).toContain("LIVE");
  expect(frame).not.toContain("refused");
  const header = lines(ui).find((l) => l.startsWith("TIME"));
  expect(header).toBe("TIME     ST   ENDPOINT         KEY     MODEL          IN/OUT     COST    LAT");
  const [chat, image] = rows(ui);
  // Money is exact: $0.00125, not rounded to $0.0013.
  expect(chat).toBe("10:01:07 200  chat/completions ci-bot  modelx-5.5      12/34 $0.00125   42ms");
  expect(image).toBe("10:01:08 200  images           default modelx-image-2  4 img    $0.16    3ms");
  expectFits(ui);
});

test("audio requests show their unit: seconds of audio, speech characters", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  feed.push(
    requestEvent({
      at: "2026-11-21T10:01:07.000Z",
      endpoint: "/v1/audio/transcriptions",
      model: "modelx-transcribe-1",
      audio_ms: 5000,
    }),
  );
  feed.push(
    requestEvent({
      at: "2026-11-21T10:01:08.000Z",
      endpoint: "/v1/audio/speech",
      model: "modelx-tts-1",
      characters: 420,
    }),
  );
  await shows(ui, "2 request(s)");
  const [transcription, speech] = rows(ui);
  expect(transcription).toContain(" 5 s ");
  expect(speech).toContain(" 420 ch ");
  expectFits(ui);
});

test("refused requests are marked ✗ with their error code, and counted", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  feed.push(
    requestEvent({
      at: "2026-11-21T10:02:00.000Z",
      key_id: "",
      key_name: "",
      model: "",
      status: 401,
      input_tokens: 0,
      output_tokens: 0,
      cost_nanos: 0,
      latency_ms: 0,
      error_code: "missing_api_key",
    }),
  );
  feed.push(
    requestEvent({
      at: "2026-11-21T10:02:01.000Z",
      key_name: "ci-bot",
      model: "modelx-5.4-mini",
      status: 429,
      cost_nanos: 0,
      latency_ms: 1,
      error_code: "rate_limit_exceeded",
    }),
  );
  feed.push(requestEvent({ at: "2026-11-21T10:02:02.000Z", status: 502, cost_nanos: 0 }));
  const frame = await shows(ui, "3 request(s), 2 refused");
  const [unauthorized, limited, failed] = rows(ui);
  expect(unauthorized).toBe(
    "10:02:00 401✗ chat/completions -      -               missing_api_key        0ms",
  );
  expect(limited).toBe("10:02:01 429✗ chat/completions ci-bot modelx-5.4-mini rate_limit_exceeded    1ms");
  // An upstream failure after admission was billed (nothing): not a refusal, but shown red as an error.
  expect(failed).toStartWith("10:02:02 502  chat/completions");
  expect(frame).toContain("$0.00");
  expectFits(ui);
  await press(ui, "f");
  await shows(ui, "Filter the log");
  await press(ui, KEYS.enter);
  await press(ui, KEYS.enter);
  await type(ui, "401");
  await press(ui, KEYS.enter);
  await shows(ui, "1 request(s), 1 refused · filter status=401*");
});

test("at 80 columns the longest endpoint and model are whole, and small costs keep their digits", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  const at = "2026-11-21T10:03:00.000Z";
  feed.push(
    requestEvent({
      at,
      endpoint: "/v1/messages/count_tokens",
      key_name: "a-rather-long-key-name-for-the-nightly-build",
      model: "modelx-5.3-c-spark",
      input_tokens: 123456,
      output_tokens: 78901,
      cost_nanos: 21_000,
      latency_ms: 12345,
    }),
  );
  feed.push(requestEvent({ at, endpoint: "/v1/images/generations", cost_nanos: 50 }));
  feed.push(requestEvent({ at, endpoint: "/v1/dashboard/billing/balance", cost_nanos: 0 }));
  await shows(ui, "3 request(s)");
  const [count, images, balance] = rows(ui);
  expect(count).toContain(" count_tokens ");
  expect(count).toContain(" modelx-5.3-c-spark ");
  expect(count).toContain(" 123k/79k   $0.000021  12.3s");
  expect(count).toContain(" a-rat…");
  expect(images).toContain(" images ");
  expect(images).toContain("$0.00000005");
  expect(balance).toContain(" balance ");
  expect(lines(ui).join("\n")).not.toContain("$0.0000 ");
  expectFits(ui);
});

test("at 80 columns a long model and key are cut so that every row stays one line", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  feed.push(
    requestEvent({
      at: "2026-11-21T10:04:00.000Z",
      key_name: "nightly-build-runner",
      model: "modelz-haiku-4-5-20251001",
      input_tokens: 123456,
      output_tokens: 78901,
      cost_nanos: 9_999_986_200,
      latency_ms: 12345,
    }),
  );
  feed.push(requestEvent({ at: "2026-11-21T10:04:01.000Z", status: 429, error_code: "rate_limit_exceeded" }));
  await shows(ui, "2 request(s)");
  const [row] = rows(ui);
  // Tokens, cost and latency whole at the end of the row; the key name is cut first, then the model.
  expect(row).toEndWith(" 123k/79k $9.9999862  12.3s");
  expect(row).toContain("chat/completions");
  expect(row).toMatch(/ ni… modelz-haiku-4-5-… /);
  expectFits(ui);
});

test("f filters by key, model and status; x clears", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  feed.push(requestEvent({ key_name: "alice", model: "modelx-5.5", status: 200 }));
  feed.push(requestEvent({ key_name: "bob", model: "modelx-5.4-mini", status: 200 }));
  feed.push(requestEvent({ key_name: "bob", model: "modelx-5.4-mini", status: 429 }));
  feed.push(requestEvent({ key_name: "alice", model: "modelx-5.4-mini", status: 403 }));
  await shows(ui, "4 request(s)");
  await press(ui, "f");
  await shows(ui, "Filter the log");
  expectFits(ui);
  await type(ui, "bob");
  await press(ui, KEYS.enter);
  await type(ui, "mini");
  await press(ui, KEYS.enter);
  await type(ui, "4");
  await press(ui, KEYS.enter);
  const filtered = await shows(ui, "1 request(s) · filter key~bob model~mini status=4*");
  expect(filtered).not.toContain("refused"); // pushed without an error code: settled failures
  expect(rows(ui).length).toBe(1);
  expect(rows(ui)[0]).toContain(" 429 ");
  expect(filtered).not.toContain("alice");
  await press(ui, "x");
  await shows(ui, "4 request(s)");
  expect(rows(ui).length).toBe(4);
});

test("p pauses: new requests are counted, not shown, until p again", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  feed.push(requestEvent({ key_name: "before" }));
  await shows(ui, "1 request(s)");
  await press(ui, "p");
  await shows(ui, "PAUSED");
  feed.push(requestEvent({ key_name: "during1" }));
  feed.push(requestEvent({ key_name: "during2" }));
  const paused = await shows(ui, "2 new");
  expect(paused).not.toContain("during1");
  expect(rows(ui).length).toBe(1);
  await press(ui, "p");
  const live = await shows(ui, "LIVE 3 request(s)");
  expect(live).toContain("during2");
});

test("a long log keeps the newest lines in 80×24 and scrolls back with ↑", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  for (let i = 0; i < 60; i++) feed.push(requestEvent({ key_name: `k${i}`, latency_ms: i }));
  await shows(ui, "60 request(s)");
  expectFits(ui);
  const newest = rows(ui);
  expect(newest.at(-1)).toContain("k59");
  expect(newest.length).toBeGreaterThan(10);
  await press(ui, KEYS.up);
  await press(ui, KEYS.up);
  await shows(ui, "scrolled back 2");
  expect(rows(ui).at(-1)).toContain("k57");
  expectFits(ui);
});

test("the feed's connection state is on the status line", async () => {
  const { feed, ui } = start();
  await shows(ui, "live feed connected");
  feed.state({ kind: "down", reason: "Unable to connect", retryInMs: 2000 });
  await shows(ui, "live feed lost (Unable to connect); reconnecting in 2 s");
  expectFits(ui);
  feed.state({ kind: "connecting" });
  await shows(ui, "connecting to the live feed");
  feed.state({ kind: "live" });
  await shows(ui, "live feed connected");
});

test("the log keeps collecting while another screen is shown, and ignores that screen's keys", async () => {
  const feed = new FakeFeed();
  const ui = renderApp(new FakeApi(), feed, "keys");
  await shows(ui, "no keys yet");
  feed.push(requestEvent({ key_name: "bg" }));
  await press(ui, "p"); // a keys-screen keystroke: must not pause the hidden log
  await press(ui, "f"); // nor open its filter form
  await press(ui, "3");
  const frame = await shows(ui, "1 request(s)");
  expect(frame).toContain("LIVE");
  expect(frame).not.toContain("Filter the log");
  expect(rows(ui)[0]).toContain("bg");
});

test("requests that share a client-chosen x-request-id each keep their own line", async () => {
  const { feed, ui } = start();
  await shows(ui, "waiting for requests");
  const warnings: unknown[] = [];
  const originalError = console.error;
  console.error = (...args: unknown[]) => warnings.push(args);
  try {
    for (const [i, model] of ["modelx-5.5", "modelx-5.4", "modelx-5.4-mini"].entries()) {
      feed.push(requestEvent({ request_id: "retry-42", model, at: `2026-11-21T10:03:0${i}.000Z` }));
    }
    await shows(ui, "3 request(s)");
    feed.push(
      requestEvent({ request_id: "retry-42", model: "modelx-5.3-c", at: "2026-11-21T10:03:09.000Z" }),
    );
    await shows(ui, "4 request(s)");
  } finally {
    console.error = originalError;
  }
  const models = rows(ui).map((r) => r.split(/\s+/)[4]);
  expect(models).toEqual(["modelx-5.5", "modelx-5.4", "modelx-5.4-mini", "modelx-5.3-c"]);
  expect(warnings).toEqual([]);
});

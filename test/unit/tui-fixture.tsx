// Shared parts of the terminal UI component tests: an in-memory admin API with the real API's
// semantics (secret only in the create answer, statuses, credits), a feed the test drives, and
// helpers to type keys, wait for a frame and check it fits an 80×24 terminal.
import { expect } from "bun:test";
import { render } from "ink-testing-library";
import { type AdminApi, ApiFailure, type KeyChange, type NewKeyInput } from "../../admin-tui/api.ts";
import { App, type ScreenName } from "../../admin-tui/app.tsx";
import type { FeedSource, FeedState } from "../../admin-tui/feed.ts";
import type { AccountView, KeyView, RequestEvent, UsageRow } from "../../admin-tui/types.ts";

export const KEYS = {
  up: "\u001B[A",
  down: "\u001B[B",
  enter: "\r",
  escape: "\u001B",
  tab: "\t",
  backspace: "\u007F",
} as const;

export function keyView(name: string, overrides: Partial<KeyView> = {}): KeyView {
  return {
    id: `key_${name}`,
    prefix: `sk-${name.slice(0, 4).padEnd(4, "x")}abc`,
    name,
    account: "default",
    group: "default",
    status: "enabled",
    expires_at: null,
    allow_ips: [],
    daily_cap_nanos: null,
    rpm: null,
    concurrency: null,
    spent_today_nanos: 0,
    last_used_at: null,
    ...overrides,
  };
}

/** An admin API in memory; `down` makes every call fail as an unreachable gateway does. */
export class FakeApi implements AdminApi {
  readonly url = "http://127.0.0.1:9999";
  keys: KeyView[] = [];
  accounts: AccountView[] = [{ id: 1, name: "default", balance_nanos: 10e9, spent_today_nanos: 0 }];
  usageRows: Record<"model" | "day", UsageRow[]> = { model: [], day: [] };
  calls: string[] = [];
  updates: { id: string; change: KeyChange }[] = [];
  down = false;
  #n = 0;

  #check(call: string): void {
    this.calls.push(call);
    if (this.down) throw new ApiFailure(`gateway unreachable at ${this.url} (Unable to connect)`);
  }
  async listKeys() {
    this.#check("listKeys");
    return this.keys.map((k) => ({ ...k }));
  }
  async createKey(input: NewKeyInput) {
    this.#check("createKey");
    if (!this.accounts.some((a) => a.name === input.account)) {
      throw new ApiFailure(`account "${input.account}" does not exist`);
    }
    const key = keyView(input.name ?? "", {
      id: `key_${++this.#n}`,
      prefix: `sk-new${this.#n}xyz`,
      account: input.account,
      daily_cap_nanos: input.daily_cap_usd ? Number(input.daily_cap_usd) * 1e9 : null,
      rpm: input.rpm ?? null,
      allow_ips: input.allow_ips ?? [],
    });
    this.keys.push(key);
    return { ...key, secret: `sk-SECRET-${this.#n}-only-once` };
  }
  async setKeyStatus(id: string, status: "enabled" | "revoked") {
    this.#check(`setKeyStatus ${id} ${status}`);
    return this.#patch(id, { status });
  }
  async updateKey(id: string, change: KeyChange) {
    this.#check(`updateKey ${id}`);
    this.updates.push({ id, change });
    return this.#patch(id, {
      rpm: change.rpm ?? null,
      allow_ips: change.allow_ips ?? [],
      ...(change.group ? { group: change.group } : {}),
    });
  }
  #patch(id: string, patch: Partial<KeyView>): KeyView {
    const key = this.keys.find((k) => k.id === id);
    if (!key) throw new ApiFailure(`key "${id}" does not exist`);
    Object.assign(key, patch);
    return { ...key };
  }
  async listAccounts() {
    this.#check("listAccounts");
    return this.accounts.map((a) => ({ ...a }));
  }
  async credit(account: string, amountUsd: string, note: string) {
    this.#check(`credit ${account} ${amountUsd} ${note}`);
    const found = this.accounts.find((a) => a.name === account);
    if (!found) throw new ApiFailure(`account "${account}" does not exist`);
    if (!/^\d+(\.\d+)?$/.test(amountUsd)) throw new ApiFailure("amount_usd: expected a USD amount");
    found.balance_nanos += Math.round(Number(amountUsd) * 1e9);
    return { ...found };
  }
  async usage(by: "model" | "day", days: number) {
    this.#check(`usage ${by} ${days}`);
    return this.usageRows[by];
  }
  async announce(title: string, message: string) {
    this.#check(`announce ${title} ${message}`);
    return 2;
  }
}

/** A live feed the test drives: `push` a request, `state` a connection change. */
export class FakeFeed implements FeedSource {
  #onEvent: ((e: RequestEvent) => void) | undefined;
  #onState: ((s: FeedState) => void) | undefined;
  subscribe(onEvent: (e: RequestEvent) => void, onState: (s: FeedState) => void) {
    this.#onEvent = onEvent;
    this.#onState = onState;
    onState({ kind: "live" });
    return () => {
      this.#onEvent = undefined;
    };
  }
  push(e: RequestEvent): void {
    this.#onEvent?.(e);
  }
  state(s: FeedState): void {
    this.#onState?.(s);
  }
}

let seq = 0;
export function requestEvent(overrides: Partial<RequestEvent> = {}): RequestEvent {
  seq++;
  return {
    request_id: `req_${seq}`,
    at: `2026-11-21T10:${String(seq % 60).padStart(2, "0")}:07.000Z`,
    method: "POST",
    endpoint: "/v1/chat/completions",
    key_id: "key_default",
    key_name: "default",
    model: "modelx-5.5",
    stream: false,
    status: 200,
    input_tokens: 12,
    output_tokens: 34,
    generations: 0,
    audio_ms: 0,
    characters: 0,
    cost_nanos: 1_250_000,
    latency_ms: 42,
    ttfb_ms: null,
    error_code: null,
    ...overrides,
  };
}

export type Ui = ReturnType<typeof render>;

export function renderApp(api: AdminApi, feed: FeedSource, initial: ScreenName = "keys", probeMs = 3000) {
  return render(<App api={api} feed={feed} initial={initial} probeMs={probeMs} />);
}

/** The last frame as lines, without colour codes. */
export function lines(ui: Ui): string[] {
  return Bun.stripANSI(ui.lastFrame() ?? "").split("\n");
}

/** One turn of the event loop: React runs its passive effects, and Ink flushes a lone Escape, in one. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Waits until the app is still: no frame drawn for two turns of the event loop. A key is handled
 * as it is written and what it changes is drawn at React's commit (every render is a frame in the
 * test renderer), but the input handlers of that render attach in effects React runs just after:
 * keys sent before then would reach the previous handlers. Waiting for the frames to stop, not
 * for a time, holds on a loaded machine.
 */
async function still(ui: Ui): Promise<void> {
  let seen = -1;
  for (let calm = 0; calm < 2; ) {
    calm = ui.frames.length === seen ? calm + 1 : 0;
    seen = ui.frames.length;
    await turn();
  }
}

/** Waits (bounded) until the frame satisfies `ok` and the app is still; fails with the last frame. */
export async function until(ui: Ui, ok: (frame: string) => boolean, ms = 5000): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const frame = lines(ui).join("\n");
    if (ok(frame)) {
      await still(ui);
      return frame;
    }
    if (Date.now() > deadline) throw new Error(`frame never matched; last frame:\n${frame}`);
    await Bun.sleep(10);
  }
}

export const shows = (ui: Ui, text: string) => until(ui, (f) => f.includes(text));

/** Types text one key at a time, letting Ink handle each. */
export async function type(ui: Ui, text: string): Promise<void> {
  for (const ch of text) await press(ui, ch);
}

/** Sends one key and waits until the app has drawn what it asked for and is ready for the next. */
export async function press(ui: Ui, key: string): Promise<void> {
  ui.stdin.write(key);
  await still(ui);
}

/** The frame fits an 80×24 terminal: at most 24 lines, none wider than 80 columns. */
export function expectFits(ui: Ui): void {
  const frame = lines(ui);
  expect(frame.length).toBeLessThanOrEqual(24);
  const widest = Math.max(...frame.map((l) => Bun.stringWidth(l)));
  expect(widest).toBeLessThanOrEqual(80);
}

// The screens' poll hook: one call to the gateway at a time (a tick while a call is in flight is
// skipped; reloads asked meanwhile make one call once it settles), and a screen that goes away
// cancels its call in flight (the HTTP call to the gateway ends), takes no late answer and calls no more.
import { afterEach, expect, test } from "bun:test";
import { Text } from "ink";
import { cleanup, render } from "ink-testing-library";
import { ApiFailure, HttpAdminApi } from "../../admin-tui/api.ts";
import { type Polled, usePoll } from "../../admin-tui/poll.ts";
import { waitFor } from "../helpers/wait.ts";

let server: ReturnType<typeof Bun.serve> | undefined;
afterEach(() => {
  cleanup();
  server?.stop(true);
});

/** A gateway whose every call waits until the test answers it. */
function slowGateway() {
  const calls: { signal: AbortSignal; answer: (value: string) => void }[] = [];
  const load = (signal: AbortSignal) =>
    new Promise<string>((resolve) => {
      calls.push({ signal, answer: resolve });
    });
  return { calls, load };
}

interface ScreenProps {
  load: (signal: AbortSignal) => Promise<string>;
  everyMs: number;
  /** Where the screen leaves its poll, for the test to ask a reload. */
  hook: { polled?: Polled<string> };
}

function Screen({ load, everyMs, hook }: ScreenProps) {
  hook.polled = usePoll(load, everyMs);
  return <Text>{hook.polled.data ?? "nothing yet"}</Text>;
}

function mount(load: (signal: AbortSignal) => Promise<string>, everyMs: number) {
  const hook: { polled?: Polled<string> } = {};
  const ui = render(<Screen load={load} everyMs={everyMs} hook={hook} />);
  return { ui, reload: () => hook.polled?.reload() };
}

/** Waits until `n` ticks of a 1 ms timer have passed: a 1 ms poll has had as many chances to call. */
async function ticksPass(n: number): Promise<void> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    await waitFor(`${n} timer ticks`, () => ticks >= n);
  } finally {
    clearInterval(timer);
  }
}

test("while a call is in flight, the poll's ticks make no second call", async () => {
  const gateway = slowGateway();
  const { ui } = mount(gateway.load, 1);
  await waitFor("the first call", () => gateway.calls.length === 1);
  await ticksPass(30);
  expect(gateway.calls.length).toBe(1);
  gateway.calls[0]?.answer("first");
  await waitFor("the first answer shown", () => ui.lastFrame()?.includes("first"));
  await waitFor("the next tick's call", () => gateway.calls.length === 2);
});

test("reloads asked during a call make one call, once it has settled", async () => {
  const gateway = slowGateway();
  const { ui, reload } = mount(gateway.load, 1_000_000);
  await waitFor("the first call", () => gateway.calls.length === 1);
  reload();
  reload();
  reload();
  expect(gateway.calls.length).toBe(1);
  gateway.calls[0]?.answer("first");
  await waitFor("the reload's call", () => gateway.calls.length === 2);
  gateway.calls[1]?.answer("second");
  await waitFor("the second answer shown", () => ui.lastFrame()?.includes("second"));
  expect(gateway.calls.length).toBe(2);
});

test("unmounting cancels the call in flight; its late answer changes nothing and no call follows", async () => {
  const gateway = slowGateway();
  const { ui, reload } = mount(gateway.load, 1);
  await waitFor("the first call", () => gateway.calls.length === 1);
  ui.unmount();
  expect(gateway.calls[0]?.signal.aborted).toBe(true);
  gateway.calls[0]?.answer("too late");
  reload();
  await ticksPass(30);
  expect(gateway.calls.length).toBe(1);
  // No frame ever showed the late answer (Ink may still write its closing frame after unmount,
  // so the last frame itself is not compared).
  expect(ui.frames.filter((f) => f.includes("too late"))).toEqual([]);
});

test("a cancelled read ends its HTTP call to the gateway", async () => {
  const seen: Request[] = [];
  server = Bun.serve({
    port: 0,
    fetch: (req) => {
      seen.push(req);
      return new Promise<Response>(() => {}); // a gateway that never answers
    },
  });
  const api = new HttpAdminApi(`http://127.0.0.1:${server.port}`, "mga-test");
  const controller = new AbortController();
  const read = api.listKeys(controller.signal);
  await waitFor("the call to reach the gateway", () => seen.length === 1);
  controller.abort();
  await expect(read).rejects.toThrow(ApiFailure);
  await waitFor("the gateway to see the call end", () => seen[0]?.signal.aborted);
});

// The real `modelgate tui` (the compiled binary) in an 80×24 tmux pane against a running gateway:
// create a key through the form (a burst of Backspaces in one write edits the field), read its
// one-time secret off the screen, see it listed, make a proxied request with it and see the request
// appear on the live log screen; `r` asks before revoking. Then a 100×30 pane resized to 80×24:
// every log row, a long model id's included, stays one line before and after the resize.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { adminTokenIn, binary, type RunningGateway, startGateway, tempDir } from "../helpers/gateway.ts";

// A private tmux server (its own socket in a directory of this run) and a session name unique
// to this run: nothing else's sessions are seen or touched.
const SOCKET_DIR = tempDir("modelgate-tmux-");
const SOCKET = join(SOCKET_DIR, "tmux.sock");
const SESSION = `modelgate-tui-e2e-${process.pid}-${randomBytes(4).toString("hex")}`;
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;

let gw: RunningGateway | undefined;
let token = "";

function tmux(...args: string[]): string {
  const run = Bun.spawnSync(["tmux", "-S", SOCKET, ...args], { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

function sessionAlive(): boolean {
  const run = Bun.spawnSync(["tmux", "-S", SOCKET, "has-session", "-t", SESSION], {
    stdout: "ignore",
    stderr: "ignore",
  });
  return run.exitCode === 0;
}

const screen = (session = SESSION) => tmux("capture-pane", "-p", "-t", session);

/** Polls the pane until `ok` holds (generous bound: the machine may be loaded); returns the screen. */
async function waitScreen(
  what: string,
  ok: (text: string) => boolean,
  session = SESSION,
  ms = 30_000,
): Promise<string> {
  const deadline = Date.now() + ms;
  let text = "";
  while (Date.now() < deadline) {
    text = screen(session);
    if (ok(text)) {
      await Bun.sleep(150); // let the UI attach the input handlers of what it just drew
      return text;
    }
    await Bun.sleep(100);
  }
  throw new Error(`the TUI never showed ${what}; last screen:\n${text}`);
}

const shows = (text: string) => waitScreen(JSON.stringify(text), (s) => s.includes(text));

async function keys(...names: string[]): Promise<void> {
  for (const name of names) {
    tmux("send-keys", "-t", SESSION, name);
    await Bun.sleep(120);
  }
}

/** The shell command of `modelgate tui` against the test's gateway. */
function tuiCommand(): string {
  // Ink renders only the last frame when it believes it runs in CI (CI=true in the suite's environment).
  const args = ["env", "-u", "CI", "-u", "CONTINUOUS_INTEGRATION", binary(), "tui"];
  return [...args, "--url", gw?.url ?? "", "--token", token].map((a) => `'${a}'`).join(" ");
}

beforeAll(async () => {
  if (!hasTmux) return;
  gw = await startGateway();
  token = adminTokenIn(gw.logs()) ?? "";
  tmux("new-session", "-d", "-s", SESSION, "-x", "80", "-y", "24", tuiCommand());
}, 60_000);

afterAll(async () => {
  if (hasTmux) {
    // Only the session this test made, on its private server (which then exits).
    Bun.spawnSync(["tmux", "-S", SOCKET, "kill-session", "-t", SESSION], {
      stdout: "ignore",
      stderr: "ignore",
    });
  }
  rmSync(SOCKET_DIR, { recursive: true, force: true });
  await gw?.dispose();
}, 60_000);

test.skipIf(!hasTmux)(
  "create a key in the form, see it listed, see its request in the live log",
  async () => {
    const url = gw?.url ?? "";
    const first = await waitScreen("the keys table", (s) => /^default\s+sk-/m.test(s));
    expect(first).toContain(`● ${url}`);
    expect(first.split("\n")[0]).toContain("1 keys");

    await keys("n");
    await shows("New API key");
    tmux("send-keys", "-t", SESSION, "-l", "e2e-botXXXX");
    await shows("e2e-botXXXX");
    // Four Backspaces and more text in one write: every key of the burst counts.
    tmux("send-keys", "-t", SESSION, "-l", "\x7f\x7f\x7f\x7f-1");
    await shows("e2e-bot-1");
    // Name → account (default) → group (default) → cap → rpm → allowlist → submit.
    await keys("Enter", "Enter", "Enter", "Enter", "Enter", "Enter");
    const created = await shows("shown only once");
    const secret = /sk-[A-Za-z0-9_-]{20,}/.exec(created)?.[0];
    if (!secret) throw new Error(`no secret on screen:\n${created}`);

    await keys("Space"); // dismiss the secret
    const listed = await waitScreen("the new key listed", (s) =>
      /^e2e-bot-1\s+sk-\S+\s+default\s+enabled/m.test(s),
    );
    expect(listed).not.toContain(secret);

    await keys("3");
    await shows("live feed connected");
    await shows("waiting for requests");

    // The new key reaches the gateway's key cache within about a second.
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "modelx-5.5", messages: [{ role: "user", content: "hello tui" }] }),
      });
      await response.arrayBuffer();
      status = response.status;
      if (status !== 200) await Bun.sleep(200);
    }
    expect(status).toBe(200);

    const log = await waitScreen("the request in the log", (s) =>
      /^\d\d:\d\d:\d\d 200 {2}chat\/completions e2e-bot-1\s+modelx-5\.5\s+\d+\/\d+/m.test(s),
    );
    // One served request; any sent before the key reached the gateway are on the log as refused.
    const [, total, refused] = /LIVE (\d+) request\(s\)(?:, (\d+) refused)?/.exec(log) ?? [];
    expect(Number(total) - Number(refused ?? 0)).toBe(1);
    const lines = log.split("\n");
    expect(lines.length).toBeLessThanOrEqual(25); // 24 rows (+ capture's final newline)
    for (const line of lines) expect(Bun.stringWidth(line)).toBeLessThanOrEqual(80);

    // r on the keys screen asks first; any key but y leaves the key enabled.
    await keys("1");
    await shows("e2e-bot-1");
    await keys("r");
    await shows("y revokes, any other key cancels");
    await keys("n");
    await shows("revoke cancelled");
    expect(screen()).toMatch(/^default\s+sk-\S+\s+default\s+enabled/m);

    await keys("q");
    // The session ends with the program: q quits cleanly.
    const quitBy = Date.now() + 30_000;
    while (sessionAlive() && Date.now() < quitBy) await Bun.sleep(100);
    expect(sessionAlive()).toBe(false);
  },
  120_000,
);

/** Log rows (they start with a time) on a screen; each must end with its latency: one line each. */
function logRows(text: string): string[] {
  return text.split("\n").filter((line) => /^\d\d:\d\d:\d\d /.test(line));
}

test.skipIf(!hasTmux)(
  "log rows stay one line at 100 columns and after a resize to 80, with a long model id",
  async () => {
    const url = gw?.url ?? "";
    const wide = `${SESSION}-wide`;
    tmux("new-session", "-d", "-s", wide, "-x", "100", "-y", "30", tuiCommand());
    const waitWide = (what: string, ok: (text: string) => boolean) => waitScreen(what, ok, wide);
    try {
      await waitWide("the keys table", (s) => /^default\s+sk-/m.test(s));
      tmux("send-keys", "-t", wide, "3");
      await waitWide("the live feed", (s) => s.includes("live feed connected"));
      for (const model of ["modelz-haiku-4-5-20251001", "modelx-5.5"]) {
        const response = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${gw?.key}`, "content-type": "application/json" },
          body: JSON.stringify({
            model,
            max_tokens: 20,
            messages: [{ role: "user", content: "hello wide" }],
          }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
      const oneLine = (text: string) => {
        const rows = logRows(text);
        return rows.length >= 2 && rows.every((row) => /\d+(ms|s)$/.test(row.trimEnd()));
      };
      const before = await waitWide("both requests, one line each", (s) => oneLine(s) && s.includes("haiku"));
      for (const line of before.split("\n")) expect(Bun.stringWidth(line)).toBeLessThanOrEqual(100);

      tmux("resize-window", "-t", wide, "-x", "80", "-y", "24");
      const after = await waitWide(
        "the rows redrawn at 80 columns",
        (s) =>
          s.split("\n").every((line) => Bun.stringWidth(line) <= 80) &&
          oneLine(s) &&
          /^TIME .* LAT$/m.test(s),
      );
      expect(logRows(after).every((row) => /\d+(ms|s)$/.test(row.trimEnd()))).toBe(true);
      expect(after.split("\n").filter((line) => line.startsWith("TIME"))).toHaveLength(1);
    } finally {
      Bun.spawnSync(["tmux", "-S", SOCKET, "kill-session", "-t", wide], {
        stdout: "ignore",
        stderr: "ignore",
      });
    }
  },
  120_000,
);

// The README's Quick start as a newcomer runs it, in a copy of the repository: `npm start`, then
// the printed commands that build the `modelgate` command, create a key, open the console on its
// live log (80×24 tmux pane) and send a refused request, which the log must show marked. The
// commands are read from README.md, so the test fails when the README drifts from what works.
// (Dependencies are the installed ones, linked in: `npm install` itself is not re-run.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { adminTokenIn, tempDir } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";

const ROOT = resolve(import.meta.dir, "../..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const hasTmux = Bun.spawnSync(["tmux", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;

/** The text under a heading, up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README.md has no heading "${heading}"`);
  const level = heading.indexOf(" ");
  const rest = markdown.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

/** The command lines of the ```sh blocks of a text. */
function commands(text: string): string[] {
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    (m[1] ?? "").split("\n").filter((line) => line.trim() !== ""),
  );
}

function one(lines: string[], prefix: string): string {
  const found = lines.filter((l) => l.startsWith(prefix));
  if (found.length !== 1)
    throw new Error(`expected one README command starting "${prefix}", found ${found.length}`);
  return found[0] as string;
}

const quick = section(README, "## Quick start");
const START = commands(quick)[0] ?? "";
const steps = commands(section(quick, "### The `modelgate` command"));
const BUILD = one(steps, "npm run build");
const CREATE = one(steps, "KEY=$(modelgate keys create");
const TUI = one(steps, "modelgate tui ");
const [REFUSED = "", SERVED = ""] = steps.filter((l) => l.startsWith("curl "));

const SOCKET_DIR = tempDir("modelgate-qs-tmux-");
const SOCKET = join(SOCKET_DIR, "tmux.sock");
const SESSION = `modelgate-quickstart-${process.pid}-${randomBytes(4).toString("hex")}`;
let clone = "";
let server: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let stderr = "";

/** The repository's files (tracked and new, not ignored) copied, with the installed node_modules linked. */
function copyRepository(): string {
  const dir = tempDir("modelgate-quickstart-");
  const listed = Bun.spawnSync(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    stdout: "pipe",
  });
  for (const file of listed.stdout.toString().split("\0")) {
    if (file === "" || file === "node_modules") continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    try {
      copyFileSync(join(ROOT, file), join(dir, file));
    } catch {
      // a file deleted in the work tree but still in the index: a fresh clone would lack it too
    }
  }
  symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"));
  return dir;
}

/** The environment of a newcomer's shell: nothing of modelgate's, not CI (Ink draws live frames). */
function shellEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith("MODELGATE_") || name === "CI") continue;
    env[name] = value;
  }
  return env;
}

function tmux(...args: string[]): string {
  const run = Bun.spawnSync(["tmux", "-S", SOCKET, ...args], { stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`tmux ${args.join(" ")} failed: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

/** A terminal and a first start are slow on a loaded machine: a minute for each thing awaited. */
const PATIENCE_MS = 60_000;

const screen = () => tmux("capture-pane", "-p", "-t", SESSION);
const onScreen = (what: string, ok: (s: string) => boolean) =>
  waitFor(
    what,
    () => {
      const text = screen();
      return ok(text) ? text : undefined;
    },
    PATIENCE_MS,
  ).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; last screen:\n${screen()}`);
  });

async function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(["bash", "-c", script], {
    cwd: clone,
    env: shellEnv(),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr: err };
}

beforeAll(() => {
  if (hasTmux) clone = copyRepository();
});

/** Whether any process of the group `pgid` is left (signal 0 only checks). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the group, then SIGKILL to what is left after 20 s. */
async function stopGroup(pgid: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  process.kill(-pgid, "SIGTERM");
  const deadline = Date.now() + 20_000;
  while (groupAlive(pgid) && Date.now() < deadline) await Bun.sleep(50);
  if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
}

afterAll(async () => {
  if (hasTmux) {
    Bun.spawnSync(["tmux", "-S", SOCKET, "kill-session", "-t", SESSION], {
      stdout: "ignore",
      stderr: "ignore",
    });
  }
  try {
    // `npm start` runs in its own process group (setsid): npm and the gateway it started stop
    // together; the copy is removed once none of them is left to write into it.
    if (server) await stopGroup(server.pid);
  } finally {
    rmSync(SOCKET_DIR, { recursive: true, force: true });
    if (clone) rmSync(clone, { recursive: true, force: true, maxRetries: 5 });
  }
}, 60_000);

test("the README's commands are the ones this test runs", () => {
  expect(START).toBe("npm install && npm start");
  expect(commands(quick)).toContain("bash scripts/test");
  expect(BUILD).toContain('export PATH="$PWD/dist:$PATH"');
  expect(TUI).toContain("--token mga-...");
  expect(REFUSED).toContain('-H "Authorization: $KEY"');
  expect(SERVED).toContain('-H "Authorization: Bearer $KEY"');
});

test.skipIf(!hasTmux)(
  "npm start, a key, the live log in the TUI, a refused request on it",
  async () => {
    // `npm install` is the installed tree, linked in; the gateway then starts exactly as printed.
    const run = START.replace(/^npm install && /, "");
    server = Bun.spawn(["setsid", "bash", "-c", run], {
      cwd: clone,
      // Port 0: several test runs share this machine; the README's 8080 is replaced below.
      env: { ...shellEnv(), MODELGATE_LISTEN: "127.0.0.1:0" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of server.stderr) stderr += decoder.decode(chunk, { stream: true });
    })();
    const url = await waitFor(
      "the gateway listening",
      () => /"msg":"modelgate listening","url":"([^"]+)"/.exec(stderr)?.[1],
      PATIENCE_MS,
    );
    expect(stderr).toContain("created account `default` with 10.00 USD");
    const token = adminTokenIn(stderr) ?? "";
    expect(token).not.toBe("");
    const local = (line: string) => line.replaceAll("http://127.0.0.1:8080", url);

    // Build the command and make a key, as printed (the key is kept for the later steps).
    const made = await bash(`set -e\n${BUILD}\n${CREATE}\nprintf %s "$KEY"`);
    expect(made.code).toBe(0);
    const key = made.stdout.trim().split("\n").at(-1) ?? ""; // after npm's build output
    expect(key).toMatch(/^sk-[A-Za-z0-9_-]{40,}$/);
    expect(made.stderr).toContain("for account default, group default");
    // The executable carries its source maps inside: the build leaves nothing else in dist/.
    expect(readdirSync(join(clone, "dist"))).toEqual(["modelgate"]);

    // The console, in an 80×24 pane, on the live log.
    const tui = local(TUI).replace("mga-...", token);
    tmux(
      "new-session",
      "-d",
      "-s",
      SESSION,
      "-x",
      "80",
      "-y",
      "24",
      `cd '${clone}' && env -u CI bash -c '${BUILD} && ${tui}'`,
    );
    await onScreen("the new key listed", (s) => /^first-key\s+sk-/m.test(s));
    tmux("send-keys", "-t", SESSION, "3");
    await onScreen(
      "the live log",
      (s) => s.includes("live feed connected") && s.includes("waiting for requests"),
    );

    // The refused request, then a served one, with the key from `keys create`.
    const refused = await bash(`KEY='${key}'\n${local(REFUSED)}`);
    expect(refused.stdout).toContain('"code":"malformed_authorization"');
    // The CLI's key reaches the running gateway within a second: until then it is refused too.
    let answer = "";
    const deadline = Date.now() + 10_000;
    while (!answer.includes('"object":"list"') && Date.now() < deadline) {
      answer = (await bash(`KEY='${key}'\n${local(SERVED)}`)).stdout;
      if (!answer.includes('"object":"list"')) await Bun.sleep(200);
    }
    expect(answer).toContain('"object":"list"');

    const log = await onScreen(
      "the refused request marked on the log",
      (s) =>
        /^\d\d:\d\d:\d\d 401✗ models\s.*malformed_authorization/m.test(s) &&
        /^\d\d:\d\d:\d\d 200 {2}models\s+first-key/m.test(s),
    );
    expect(log).toMatch(/request\(s\), \d+ refused/);
    expect(log).not.toContain(key);
  },
  180_000,
);

// Lifts Bun's cap on concurrent fetch requests for a long-running command. Bun reads
// BUN_CONFIG_MAX_HTTP_REQUESTS only at process start (default 256), and the gateway holds one
// upstream request per open stream, so `serve` re-executes itself once, same pid, with it raised.
// Cluster workers inherit the raised variable from the primary, so they start with it and never re-exec.

const CAP_VARIABLE = "BUN_CONFIG_MAX_HTTP_REQUESTS";
const CAP = "65535";

/** The command line that runs this process again: its executable and the same arguments. */
export function selfCommand(): string[] {
  // A compiled executable's argv is ["bun", "/$bunfs/root/<name>", ...args]; under `bun main.ts`
  // argv[1] is the script, which must be passed again.
  const script = process.argv[1] ?? "";
  const args = script.startsWith("/$bunfs/") ? process.argv.slice(2) : process.argv.slice(1);
  return [process.execPath, ...args];
}

/** Re-executes the process with the fetch cap raised, unless it is already set. Returns if not needed. */
export function liftFetchCap(): void {
  if (process.env[CAP_VARIABLE] !== undefined || typeof process.execve !== "function") return;
  const command = selfCommand();
  process.execve(process.execPath, command, { ...process.env, [CAP_VARIABLE]: CAP });
}

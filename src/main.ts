#!/usr/bin/env bun
// The modelgate command line: parses the command and hands off to its module.
// Each command's module is imported only when that command runs: `serve` then never evaluates the
// terminal UI, and the store commands never load the gateway's request path (tokenizer vocabulary,
// image codecs), which keeps both start time and resident memory down. The executable is built with
// --splitting, so a module imported lazily is a chunk of its own that `serve` never even parses
// (compiled serve idle RSS 68.0 → 62.2 MB, bench/idle-memory.ts). The executable is also the
// script of its threads (src/base/thread.ts: the usage store, token and simulator image threads),
// so this module imports nothing at its
// top: a static import here would be evaluated in that thread too (the argument parser pulled in
// the config schema and the ledger meter into it).
import pkg from "../package.json";

const VERSION: string = pkg.version;

const HELP = `modelgate ${VERSION}: a model access gateway

usage: modelgate COMMAND [options]

commands:
  serve      run the gateway (--listen, --config, --db, --tls-cert, --tls-key, --no-bootstrap, ...)
  sim        run the upstream simulator on its own (--listen ADDR, --seed N)
  accounts   create | credit | list
  groups     set | list
  keys       create | list | revoke | enable
  usage      totals of requests, tokens and cost (--key, --account, --since, --until, --group-by, --format)
  admin      token create | token list | token revoke ID (admin API tokens)
  cache      purge [--account NAME] (the response cache's stored answers)
  tui        the terminal UI (--url, --token or MODELGATE_ADMIN_URL / MODELGATE_ADMIN_TOKEN)

Every store command takes --db URL (sqlite://PATH or postgres://...) or --config FILE and works
while serve runs; it never creates a database (only serve does).
Run \`modelgate COMMAND --help\` for its usage.`;

type Command = (args: string[]) => Promise<void>;
/** A command: what runs it and its usage, printed for --help / -h. */
type CommandModule = { run: Command; usage: string };

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  serve: async () => {
    (await import("./base/reexec.ts")).liftFetchCap();
    const { serveCommand, USAGE } = await import("./cli/serve.ts");
    return { run: serveCommand, usage: USAGE };
  },
  sim: async () => {
    const { simCommand, USAGE } = await import("./cli/sim.ts");
    return { run: simCommand, usage: USAGE };
  },
  accounts: async () => {
    const { accountsCommand, USAGE } = await import("./cli/accounts.ts");
    return { run: accountsCommand, usage: USAGE };
  },
  groups: async () => {
    const { groupsCommand, USAGE } = await import("./cli/groups.ts");
    return { run: groupsCommand, usage: USAGE };
  },
  keys: async () => {
    const { keysCommand, USAGE } = await import("./cli/keys.ts");
    return { run: keysCommand, usage: USAGE };
  },
  usage: async () => {
    const { usageCommand, USAGE } = await import("./cli/usage.ts");
    return { run: usageCommand, usage: USAGE };
  },
  admin: async () => {
    const { adminCommand, USAGE } = await import("./cli/admin.ts");
    return { run: adminCommand, usage: USAGE };
  },
  tui: async () => {
    const { tuiCommand, USAGE } = await import("./cli/tui.ts");
    return { run: tuiCommand, usage: USAGE };
  },
  cache: async () => {
    const { cacheCommand, USAGE } = await import("./cli/cache.ts");
    return { run: cacheCommand, usage: USAGE };
  },
};

/** --help or -h anywhere before a `--` asks for the command's usage (subcommands share it). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === "--help" || arg === "-h");
}

async function main(argv: string[]): Promise<void> {
  const [command, ...args] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    console.log(HELP);
    return;
  }
  if (command === "--version" || command === "version") {
    console.log(VERSION);
    return;
  }
  const load = COMMANDS[command];
  if (!load)
    throw new (await import("./cli/usage-error.ts")).UsageError(`unknown command "${command}"\n\n${HELP}`);
  const module = await load();
  if (asksForHelp(args)) {
    console.log(module.usage);
    return;
  }
  await module.run(args);
}

if (Bun.isMainThread) {
  main(process.argv.slice(2)).catch(async (error: unknown) => {
    const [{ UsageError }, { ConfigError }, { StoreError }] = await Promise.all([
      import("./cli/usage-error.ts"),
      import("./config/load.ts"),
      import("./store/store.ts"),
    ]);
    if (error instanceof UsageError || error instanceof ConfigError || error instanceof StoreError) {
      console.error(`modelgate: ${error.message}`);
      process.exit(error instanceof UsageError ? 2 : 1);
    }
    console.error(error);
    process.exit(1);
  });
} else {
  // The compiled executable started again as a thread (src/base/thread.ts): the token thread
  // (TOKEN_THREAD_ROLE, src/catalog/token-thread.ts), the simulator's image thread
  // (IMAGE_THREAD_ROLE, src/sim/images/thread.ts) or the usage store thread (src/billing/store-thread.ts).
  if (process.argv.includes("--token-thread")) await import("./catalog/token-worker.ts");
  else if (process.argv.includes("--sim-image-thread")) await import("./sim/images/image-worker.ts");
  else await import("./billing/store-worker.ts");
}

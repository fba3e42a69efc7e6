#!/usr/bin/env bun
// The modelgate command line: parses the command and hands off to its module.
import { accountsCommand } from "./cli/accounts.ts";
import { adminCommand } from "./cli/admin.ts";
import { UsageError } from "./cli/args.ts";
import { groupsCommand } from "./cli/groups.ts";
import { keysCommand } from "./cli/keys.ts";
import { serveCommand } from "./cli/serve.ts";
import { simCommand } from "./cli/sim.ts";
import { tuiCommand } from "./cli/tui.ts";
import { usageCommand } from "./cli/usage.ts";
import { ConfigError } from "./config/load.ts";
import { VERSION } from "./gateway.ts";
import { StoreError } from "./store/store.ts";

const HELP = `modelgate ${VERSION}: a model access gateway

usage: modelgate COMMAND [options]

commands:
  serve      run the gateway (--listen, --config, --db, --tls-cert, --tls-key, --no-bootstrap, ...)
  sim        run the upstream simulator on its own (--listen ADDR, --seed N)
  accounts   create | credit | list
  groups     set | list
  keys       create | list | revoke | enable
  usage      totals of requests, tokens and cost (--key, --account, --since, --until, --group-by)
  admin      token create | token list (admin API tokens)
  tui        the terminal UI (--url, --token or MODELGATE_ADMIN_URL / MODELGATE_ADMIN_TOKEN)

Every store command takes --db sqlite://PATH or --config FILE and works while serve runs.
Run \`modelgate COMMAND\` without arguments for its usage.`;

const COMMANDS: Record<string, (args: string[]) => Promise<void>> = {
  serve: serveCommand,
  sim: simCommand,
  accounts: accountsCommand,
  groups: groupsCommand,
  keys: keysCommand,
  usage: usageCommand,
  admin: adminCommand,
  tui: tuiCommand,
};

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
  const run = COMMANDS[command];
  if (!run) throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
  await run(args);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || error instanceof ConfigError || error instanceof StoreError) {
    console.error(`modelgate: ${error.message}`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
  console.error(error);
  process.exit(1);
});

// `modelgate groups set|list`.
import { checkModelPattern } from "../catalog/groups.ts";
import { printableName } from "./flag-values.ts";
import { parse } from "./flags.ts";
import { STORE_FLAGS, storeFrom } from "./open-store.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage:
  modelgate groups set NAME --models PATTERN[,PATTERN...]   (exact ids or a prefix ending in *)
  modelgate groups list [--json]
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --journal PATH | --config FILE`;

export async function groupsCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  const { values, positionals } = parse(
    rest,
    { ...STORE_FLAGS, models: { type: "string" } },
    `groups ${sub ?? ""}`.trim(),
  );
  switch (sub) {
    case "set": {
      const [name, extra] = positionals;
      if (!name || extra !== undefined || values.models === undefined) throw new UsageError(USAGE);
      printableName(name, "group name");
      const patterns = values.models
        .split(",")
        .map((p) => p.trim())
        .filter((p) => p.length > 0);
      if (patterns.length === 0) throw new UsageError("--models: give at least one model id or pattern");
      for (const pattern of patterns) {
        const problem = checkModelPattern(pattern);
        if (problem) throw new UsageError(`--models: ${problem}`);
      }
      const store = await storeFrom(values);
      const group = await store.setGroup(name, patterns);
      console.log(
        values.json ? JSON.stringify(group) : `group ${group.name} allows ${group.modelPatterns.join(", ")}`,
      );
      return;
    }
    case "list": {
      if (positionals.length > 0) throw new UsageError(USAGE);
      const store = await storeFrom(values);
      const rows = (await store.listGroups()).map((g) => ({ name: g.name, models: g.modelPatterns }));
      console.log(values.json ? JSON.stringify(rows) : table(rows, ["name", "models"]));
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

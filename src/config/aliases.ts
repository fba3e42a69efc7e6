// The `[aliases]` configuration section: model names clients hard-code, mapped to catalog models,
// for every key (`[aliases.models]`) or for the keys of one group (`[aliases.groups.NAME]`, which
// wins over a global alias of the same name). A target is a catalog id or another alias seen from
// the same place (a group alias may name a global one); the chain is followed at load.
//
//   [aliases.models]
//   "gpt-4o" = "modelx-5.5"
//   "claude-sonnet-4-5" = "modelz-sonnet-4-5-20250929"
//
//   [aliases.groups.interns]
//   "gpt-4o" = "modelx-5.4-mini"
//
// An alias to an unknown model, a cycle, or an alias that is itself a catalog id is refused at
// load with the alias's path (aliasProblems).
import * as v from "valibot";
import { followAlias } from "../catalog/aliases.ts";
import { findModel } from "../catalog/models.ts";

const AliasName = v.pipe(
  v.string(),
  v.minLength(1, "an alias name may not be empty"),
  v.maxLength(200, "an alias name is at most 200 characters"),
);
const AliasMap = v.record(AliasName, v.pipe(v.string(), v.minLength(1, "expected a model id")));

export const AliasesConfigSchema = v.strictObject({
  /** Alias → model id (or another alias), for every key. */
  models: v.optional(AliasMap, {}),
  /** Group name → its own aliases, consulted before the global ones. */
  groups: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), AliasMap), {}),
});

export type AliasesConfig = v.InferOutput<typeof AliasesConfigSchema>;

/** Every problem of the section, each starting with the alias's path; empty when it is sound. */
export function aliasProblems(config: AliasesConfig): string[] {
  const problems: string[] = [];
  const check = (path: string, group: string | undefined, map: Record<string, string>) => {
    for (const alias of Object.keys(map)) {
      const at = `${path}.${alias}`;
      if (findModel(alias)) {
        problems.push(
          `${at}: "${alias}" is a catalog model id; an alias may not hide a real model, choose another name`,
        );
        continue;
      }
      const end = followAlias(config, group, alias);
      if ("problem" in end) problems.push(`${at}: ${end.problem}`);
    }
  };
  check("aliases.models", undefined, config.models);
  for (const [group, map] of Object.entries(config.groups)) check(`aliases.groups.${group}`, group, map);
  return problems;
}

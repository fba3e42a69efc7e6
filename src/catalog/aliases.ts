// Client-facing model aliases (`[aliases]`, src/config/aliases.ts): names clients hard-code, such as
// "gpt-4o", resolved to a catalog model for every key or for one group's keys. A request that names
// an alias is served, billed and limited as its target; the alias is kept beside the target in its
// usage record, and GET /v1/models lists it for keys whose group may use the target.
import { findModel, type ModelInfo } from "./models.ts";

/** Alias → target (a model id or another alias), globally and per group. */
export interface AliasMaps {
  models: Readonly<Record<string, string>>;
  groups: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * The catalog id an alias seen from `group` (undefined: the global aliases only) ends at, or why it
 * does not: an unknown model, or a cycle (listed). A group's own alias wins over a global one.
 */
export function followAlias(
  maps: AliasMaps,
  group: string | undefined,
  alias: string,
): { id: string } | { problem: string } {
  const seen = [alias];
  let name = alias;
  for (;;) {
    const next = (group === undefined ? undefined : maps.groups[group]?.[name]) ?? maps.models[name];
    if (next === undefined) {
      if (findModel(name)) return { id: name };
      return {
        problem: `"${name}" is neither a catalog model id nor an alias; point it at a model GET /v1/models lists`,
      };
    }
    if (seen.includes(next)) return { problem: `aliases form a cycle: ${[...seen, next].join(" → ")}` };
    seen.push(next);
    name = next;
  }
}

/** An alias as a model list shows it: the target's facts under the alias's name. */
export interface AliasEntry {
  alias: string;
  target: ModelInfo;
}

/** The aliases resolved once at start: one lookup per request. */
export class AliasTable {
  readonly #global: ReadonlyMap<string, ModelInfo>;
  readonly #groups: ReadonlyMap<string, ReadonlyMap<string, ModelInfo>>;

  /** `maps` must have passed aliasProblems (src/config/aliases.ts); an alias that does not resolve is left out. */
  constructor(maps: AliasMaps) {
    const resolved = (group: string | undefined, names: Iterable<string>) => {
      const out = new Map<string, ModelInfo>();
      for (const name of names) {
        const end = followAlias(maps, group, name);
        const model = "id" in end ? findModel(end.id) : undefined;
        if (model) out.set(name, model);
      }
      return out;
    };
    this.#global = resolved(undefined, Object.keys(maps.models));
    this.#groups = new Map(
      Object.entries(maps.groups).map(([group, own]) => [
        group,
        resolved(group, new Set([...Object.keys(maps.models), ...Object.keys(own)])),
      ]),
    );
  }

  /** The model `name` names for a key of `group` when it is an alias; undefined otherwise. */
  resolve(group: string, name: string): ModelInfo | undefined {
    return (this.#groups.get(group) ?? this.#global).get(name);
  }

  /** The aliases a key of `group` sees, in name order. */
  entries(group: string): AliasEntry[] {
    const map = this.#groups.get(group) ?? this.#global;
    return [...map]
      .map(([alias, target]) => ({ alias, target }))
      .sort((a, b) => (a.alias < b.alias ? -1 : a.alias > b.alias ? 1 : 0));
  }

  get size(): number {
    return this.#global.size + this.#groups.size;
  }
}

// Group model patterns: exact ids or a prefix ending in `*`; decides which models a key may use.
import type { ModelId } from "../base/types.ts";
import { MODELS, type ModelInfo } from "./models.ts";

/** Checks that a pattern is an exact catalog id or a prefix ending in `*`; returns an error message if not. */
export function checkModelPattern(pattern: string): string | undefined {
  if (pattern === "*") return undefined;
  if (pattern.endsWith("*")) {
    const prefix = pattern.slice(0, -1);
    if (prefix.includes("*")) return `pattern "${pattern}" may hold "*" only at its end`;
    if (!MODELS.some((m) => m.id.startsWith(prefix)))
      return `pattern "${pattern}" matches no model of the catalog`;
    return undefined;
  }
  if (!MODELS.some((m) => m.id === pattern)) {
    return `"${pattern}" is not a model id of the catalog; use an exact id or a prefix ending in "*"`;
  }
  return undefined;
}

/** A compiled allow-list: which model ids a group permits. */
export class ModelAllowList {
  readonly #allowed: ReadonlySet<string>;

  constructor(patterns: readonly string[]) {
    this.#allowed = new Set(MODELS.filter((m) => patterns.some((p) => matches(p, m.id))).map((m) => m.id));
  }

  allows(modelId: ModelId): boolean {
    return this.#allowed.has(modelId);
  }

  /** The allowed models in catalog order. */
  models(): ModelInfo[] {
    return MODELS.filter((m) => this.#allowed.has(m.id));
  }
}

function matches(pattern: string, id: string): boolean {
  return pattern.endsWith("*") ? id.startsWith(pattern.slice(0, -1)) : pattern === id;
}

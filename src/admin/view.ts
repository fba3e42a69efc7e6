// The one rule by which the admin API (and `keys list --json`) shows a store row as JSON: the
// listed fields in the listed order, each under the snake_case of its name, times (fields named
// `at` or `…At`, ms since the epoch) as ISO 8601 strings, null left null. An entry
// `[name, field]` shows a field under a name that is not its snake_case; `[name, (row) => value]`
// shows a computed value. Also the field groups several views share.
import type { ToolCalls, UsageCounts } from "../store/usage.ts";

/** `createdAt` → `created_at`. */
export type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

type Field<R> = keyof R & string;

/** A field shown under its snake_case, a field shown under another name, or a computed value. */
export type Entry<R> = Field<R> | readonly [string, Field<R>] | readonly [string, (row: R) => unknown];

type TimeField = "at" | `${string}At`;

/** A time field's number becomes a string (distributes: `number | null` → `string | null`). */
type Shown<F, T> = F extends TimeField ? (T extends number ? string : T) : T;

type NameOf<E> = E extends string
  ? SnakeCase<E>
  : E extends readonly [infer N extends string, unknown]
    ? N
    : never;

type ValueOf<R, E> =
  E extends Field<R>
    ? Shown<E, R[E]>
    : E extends readonly [string, infer F]
      ? F extends Field<R>
        ? Shown<F, R[F]>
        : F extends (row: R) => infer V
          ? V
          : never
      : never;

/** The JSON object a view makes of a row, key by key. */
export type View<R, Es extends readonly Entry<R>[]> = { [E in Es[number] as NameOf<E>]: ValueOf<R, E> };

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function reader<R>(field: Field<R>): (row: R) => unknown {
  if (field !== "at" && !field.endsWith("At")) return (row) => row[field];
  return (row) => {
    const at = row[field];
    return typeof at === "number" ? new Date(at).toISOString() : at;
  };
}

/**
 * The view of rows of type `R` (given first, the entries' types are then inferred):
 * `view<AdminToken>()("id", "name", "createdAt")` shows `{ id, name, created_at }`.
 */
export function view<R>() {
  return <const Es extends readonly Entry<R>[]>(...entries: Es): ((row: R) => View<R, Es>) => {
    const steps = entries.map((entry): [string, (row: R) => unknown] => {
      if (typeof entry === "string") return [snakeCase(entry), reader(entry)];
      const [name, source] = entry;
      return [name, typeof source === "function" ? source : reader(source)];
    });
    return (row) => {
      const shown: Record<string, unknown> = {};
      for (const [name, read] of steps) shown[name] = read(row);
      // The keys and values are those View<R, Es> names, made by the steps above.
      return shown as View<R, Es>;
    };
  };
}

type Counted = Pick<
  UsageCounts,
  "inputTokens" | "cachedInputTokens" | "outputTokens" | "reasoningTokens" | "generations"
> & {
  toolCalls?: ToolCalls | null | undefined;
  audioMs?: number | undefined;
  characters?: number | undefined;
};

/**
 * What one request used, as the request list and the live event feed show it (`{}`: no tool ran;
 * audio milliseconds and speech characters 0 for every other request).
 */
export const USAGE_COUNTS = [
  "inputTokens",
  "cachedInputTokens",
  "outputTokens",
  "reasoningTokens",
  "generations",
  ["tool_calls", (row: Counted) => row.toolCalls ?? {}],
  ["audio_ms", (row: Counted) => row.audioMs ?? 0],
  ["characters", (row: Counted) => row.characters ?? 0],
] as const;

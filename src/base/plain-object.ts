// The one test of "a JSON object" (not null, not an array) for data parsed from a client or an
// upstream: every reader that narrows unknown JSON asks it here.

/** A JSON object as parsed: its fields by name, each still unknown. */
export type Obj = Record<string, unknown>;

/** Whether `value` is a JSON object (not null, not an array). */
export function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Narrowing helpers for JSON already parsed from a client or an upstream: each returns a typed
// value or a neutral default, never throws, so translation of loose data stays total.
import { isObject, type Obj } from "../../base/plain-object.ts";

export type { Obj };

/** `value` when it is a JSON object, else an empty one. */
export function obj(value: unknown): Obj {
  return isObject(value) ? value : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A whole, non-negative token count (Codex rejects fractions). */
export function count(value: unknown): number {
  const n = num(value);
  return n === undefined || n < 0 ? 0 : Math.round(n);
}

/** Serializes tool input for the internal form: objects as JSON, strings as they are. */
export function argumentsText(input: unknown): string {
  if (typeof input === "string") return input;
  return JSON.stringify(input ?? {});
}

/** Parses tool arguments back into an object (Anthropic `input`); an unparsable string becomes `{}`. */
export function argumentsObject(text: string): Obj {
  if (text.trim() === "") return {};
  try {
    return obj(JSON.parse(text));
  } catch {
    return {};
  }
}

/** A short random id suffix for ids the gateway makes up (items, messages). */
export function newId(): string {
  return crypto.randomUUID().replaceAll("-", "").slice(0, 24);
}

// A request body as JSON, parsed exactly once as the first step of decoding: valid UTF-8 only,
// nesting at most MAX_JSON_DEPTH deep, empty or malformed refused — each a 400 naming the problem.
import { GatewayError } from "./errors.ts";

/** Accepted JSON bodies nest objects and arrays at most this deep (a documented limit). */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** The index of the quote closing the string opened at `open`, or -1 when it never closes. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let at = bytes.indexOf(QUOTE, open + 1);
  while (at !== -1) {
    let escapes = 0;
    while (bytes[at - 1 - escapes] === BACKSLASH) escapes++;
    if (escapes % 2 === 0) return at;
    at = bytes.indexOf(QUOTE, at + 1);
  }
  return -1;
}

/**
 * Whether the JSON text nests objects and arrays deeper than `limit`. Strings are skipped with a
 * native search, so this costs a few microseconds on a 20 KB body; malformed text is left to
 * the parser.
 */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  if (bytes.byteLength <= limit) return false;
  let depth = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = closingQuote(bytes, i);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}

/** The 400 of JSON nested deeper than MAX_JSON_DEPTH (`what`: the request body, the frame). */
export function tooDeep(what: string): GatewayError {
  return new GatewayError(
    "invalid_request",
    `The ${what} nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the most this gateway accepts. Flatten the input.`,
  );
}

/**
 * Whether an already parsed JSON value nests objects and arrays deeper than `limit` (a WebSocket
 * frame arrives parsed). Walked without recursion, so a 100k-deep value cannot overflow the stack,
 * and it stops at the first level past the limit.
 */
export function valueNestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== "object") continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text; a byte sequence that is not UTF-8 is a 400 (never silently replaced). */
function utf8(bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new GatewayError(
      "invalid_request",
      "The request body is not valid UTF-8. Encode the JSON as UTF-8 (RFC 8259 §8.1).",
    );
  }
}

/** Parses the body as JSON; empty, not UTF-8, too deep or malformed → 400 with the reason. */
export function parseJson(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) {
    throw new GatewayError(
      "invalid_request",
      "The request body is empty: send a JSON object with Content-Type: application/json.",
    );
  }
  const text = utf8(bytes);
  if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) throw tooDeep("request body");
  try {
    return JSON.parse(text);
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new GatewayError(
      "invalid_request",
      `The request body is not valid JSON (${reason}). Send a JSON object with Content-Type: application/json.`,
    );
  }
}

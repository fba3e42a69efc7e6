// A request body as JSON, parsed exactly once as the first step of decoding: valid UTF-8 only,
// nesting at most MAX_JSON_DEPTH deep, empty or malformed refused — each a 400 naming the problem;
// a key repeated inside an object is reported, so its bytes are never forwarded as they came.
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

const COLON = 0x3a;

/** Whitespace JSON allows between tokens (RFC 8259 §2). */
function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * One pass over JSON text: -1 when it nests objects and arrays deeper than `limit`, else the
 * object keys it writes (strings followed by a colon). Strings are skipped with a native search,
 * so this costs a few microseconds on a 20 KB body; malformed text is left to the parser.
 */
function scan(bytes: Uint8Array, limit: number): number {
  let depth = 0;
  let keys = 0;
  for (let i = 0; i < bytes.byteLength; i++) {
    const c = bytes[i];
    if (c === QUOTE) {
      i = closingQuote(bytes, i);
      if (i === -1) return keys;
      let next = i + 1;
      while (isSpace(bytes[next])) next++;
      if (bytes[next] === COLON) keys++;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return -1;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return keys;
}

/** Whether the JSON text nests objects and arrays deeper than `limit`. */
export function nestsDeeperThan(bytes: Uint8Array, limit: number): boolean {
  return bytes.byteLength > limit && scan(bytes, limit) === -1;
}

/** The object keys of a parsed JSON value. */
function keysOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let keys = 0;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === "object") keys += keysOf(item);
    return keys;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    keys++;
    const child = record[key];
    if (typeof child === "object") keys += keysOf(child);
  }
  return keys;
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

/** A parsed body, and whether some object in its text repeats a key (JSON.parse kept the last). */
export interface ParsedBody {
  json: unknown;
  duplicateKeys: boolean;
}

/**
 * Parses the body as JSON; empty, not UTF-8, too deep or malformed → 400 with the reason. A
 * repeated key is found without a second parse: the scan that checks the depth counts the keys
 * of the text, which differ from the keys of the parsed value exactly when one is repeated.
 */
export function parseJsonBody(bytes: Uint8Array): ParsedBody {
  if (bytes.byteLength === 0) {
    throw new GatewayError(
      "invalid_request",
      "The request body is empty: send a JSON object with Content-Type: application/json.",
    );
  }
  const text = utf8(bytes);
  const keys = scan(bytes, MAX_JSON_DEPTH);
  if (keys === -1) throw tooDeep("request body");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (thrown) {
    const reason = thrown instanceof Error ? thrown.message : String(thrown);
    throw new GatewayError(
      "invalid_request",
      `The request body is not valid JSON (${reason}). Send a JSON object with Content-Type: application/json.`,
    );
  }
  return { json, duplicateKeys: keys !== keysOf(json) };
}

/** Parses the body as JSON (see parseJsonBody), for callers that never forward its bytes. */
export function parseJson(bytes: Uint8Array): unknown {
  return parseJsonBody(bytes).json;
}

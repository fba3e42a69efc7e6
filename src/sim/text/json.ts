// Schema-valid JSON for the simulator: a deterministic value for any JSON Schema a client sends
// (objects, arrays, enums, const, numeric bounds, string lengths and formats, required fields,
// nesting, local $ref, anyOf/oneOf/allOf). Used for structured output and tool arguments.
import { isObject } from "../../base/plain-object.ts";
import type { JsonSchema } from "../../wire/text-form.ts";
import type { Rng } from "../random.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const WORDS = ["alpha", "bravo", "delta", "river", "signal", "garden", "north", "quiet", "steady", "ledger"];
const MAX_DEPTH = 8;

function asSchema(value: unknown): JsonSchema {
  return isObject(value) ? (value as JsonSchema) : {};
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Resolves a local `#/...` reference against the root schema. */
function resolveRef(root: JsonSchema, ref: string): JsonSchema {
  if (!ref.startsWith("#")) return {};
  let node: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    node = typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  return asSchema(node);
}

function typeOf(schema: JsonSchema): string | undefined {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return t.find((x): x is string => typeof x === "string" && x !== "null") ?? "null";
  if (schema.properties !== undefined) return "object";
  if (schema.items !== undefined) return "array";
  return undefined;
}

function makeString(schema: JsonSchema, rng: Rng): string {
  switch (schema.format) {
    case "date-time":
      return "2026-01-15T10:30:00Z";
    case "date":
      return "2026-01-15";
    case "time":
      return "10:30:00";
    case "email":
      return `${rng.pick(WORDS)}@example.com`;
    case "uri":
    case "url":
      return `https://example.com/${rng.pick(WORDS)}`;
    case "uuid":
      return "123e4567-e89b-42d3-a456-426614174000";
  }
  const min = num(schema.minLength) ?? 0;
  const max = num(schema.maxLength) ?? Math.max(min, 24);
  let text = rng.pick(WORDS);
  while (text.length < min) text += ` ${rng.pick(WORDS)}`;
  return text.slice(0, Math.max(min, Math.min(max, text.length)));
}

function makeNumber(schema: JsonSchema, rng: Rng, integer: boolean): number {
  const step = num(schema.multipleOf) ?? (integer ? 1 : undefined);
  let low = num(schema.minimum) ?? num(schema.exclusiveMinimum) ?? 0;
  let high = num(schema.maximum) ?? num(schema.exclusiveMaximum) ?? low + 100;
  if (num(schema.exclusiveMinimum) !== undefined) low += step ?? 0.5;
  if (num(schema.exclusiveMaximum) !== undefined) high -= step ?? 0.5;
  if (high < low) high = low;
  if (step === undefined) return Math.round((low + rng.next() * (high - low)) * 100) / 100;
  const first = Math.ceil(low / step);
  const last = Math.floor(high / step);
  return (last < first ? first : rng.int(first, last)) * step;
}

/** Tool arguments fill only required properties, as models do (optional knobs keep their defaults). */
let requiredOnly = false;

function makeObject(schema: JsonSchema, root: JsonSchema, rng: Rng, depth: number): Json {
  const out: { [key: string]: Json } = {};
  const properties = asSchema(schema.properties);
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  for (const [name, sub] of Object.entries(properties)) {
    // Past the depth limit only required properties are filled, so recursive schemas end.
    if ((requiredOnly || depth >= MAX_DEPTH) && !required.includes(name)) continue;
    out[name] = makeValue(asSchema(sub), root, rng, depth + 1);
  }
  for (const name of required) {
    if (!(name in out)) out[name] = rng.pick(WORDS);
  }
  return out;
}

function makeArray(schema: JsonSchema, root: JsonSchema, rng: Rng, depth: number): Json {
  const min = num(schema.minItems) ?? (depth >= MAX_DEPTH ? 0 : 1);
  const max = num(schema.maxItems) ?? Math.max(min, 3);
  const count = depth >= MAX_DEPTH ? min : rng.int(min, Math.max(min, Math.min(max, min + 2)));
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
  const items: Json[] = [];
  for (let i = 0; i < Math.max(count, prefix.length); i++) {
    items.push(makeValue(asSchema(prefix[i] ?? schema.items), root, rng, depth + 1));
  }
  return schema.uniqueItems === true ? dedupe(items) : items;
}

function dedupe(items: Json[]): Json[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function makeValue(schema: JsonSchema, root: JsonSchema, rng: Rng, depth: number): Json {
  if (typeof schema.$ref === "string") return makeValue(resolveRef(root, schema.$ref), root, rng, depth + 1);
  if ("const" in schema) return schema.const as Json;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return rng.pick(schema.enum) as Json;
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0)
      return makeValue(asSchema(options[0]), root, rng, depth + 1);
  }
  if (Array.isArray(schema.allOf)) {
    const merged = mergeAll(schema, schema.allOf.map(asSchema));
    return makeValue(merged, root, rng, depth + 1);
  }
  switch (typeOf(schema)) {
    case "object":
      return makeObject(schema, root, rng, depth);
    case "array":
      return makeArray(schema, root, rng, depth);
    case "string":
      return makeString(schema, rng);
    case "integer":
      return makeNumber(schema, rng, true);
    case "number":
      return makeNumber(schema, rng, false);
    case "boolean":
      return rng.next() < 0.5;
    case "null":
      return null;
    default:
      return rng.pick(WORDS);
  }
}

function mergeAll(schema: JsonSchema, parts: JsonSchema[]): JsonSchema {
  const { allOf: _ignored, ...rest } = schema;
  const properties: Record<string, unknown> = { ...asSchema(rest.properties) };
  const required = new Set<unknown>(Array.isArray(rest.required) ? rest.required : []);
  let merged: Record<string, unknown> = { ...rest };
  for (const part of parts) {
    merged = { ...merged, ...part };
    Object.assign(properties, asSchema(part.properties));
    for (const r of Array.isArray(part.required) ? part.required : []) required.add(r);
  }
  return { ...merged, properties, required: [...required], type: merged.type ?? "object" };
}

/** A deterministic JSON value valid against `schema` (the same rng state gives the same value). */
export function jsonForSchema(
  schema: JsonSchema,
  rng: Rng,
  options: { requiredOnly?: boolean } = {},
): unknown {
  requiredOnly = options.requiredOnly === true;
  try {
    return makeValue(schema, schema, rng, 0);
  } finally {
    requiredOnly = false;
  }
}

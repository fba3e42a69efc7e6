// JSON Schemas crossing protocols: whether a schema meets OpenAI's strict mode (so `strict: true`
// may be sent without changing what the client asked), and the form Anthropic structured outputs
// accept (additionalProperties: false on every object, a limited keyword set), or none when the
// client's schema cannot take that form without changing its meaning.
import { isObject } from "../../base/plain-object.ts";
import type { JsonSchema } from "../text-form.ts";
import { arr, type Obj, obj } from "./narrow.ts";

function isObjectType(node: Obj): boolean {
  return node.type === "object" || arr(node.type).includes("object") || node.properties !== undefined;
}

/** The direct sub-schemas of a node (properties, items, anyOf/allOf/oneOf, $defs). */
function children(node: Obj): unknown[] {
  return [
    ...Object.values(obj(node.properties)),
    ...Object.values(obj(node.$defs)),
    ...Object.values(obj(node.definitions)),
    ...(isObject(node.items) ? [node.items] : []),
    ...arr(node.anyOf),
    ...arr(node.allOf),
    ...arr(node.oneOf),
  ];
}

/**
 * OpenAI strict mode takes a schema whose every object sets `additionalProperties: false` and lists
 * every property in `required`; such a schema can be sent with `strict: true` as it is.
 */
export function isStrictCompatible(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  if (isObjectType(schema)) {
    if (schema.additionalProperties !== false) return false;
    const required = arr(schema.required);
    if (Object.keys(obj(schema.properties)).some((p) => !required.includes(p))) return false;
  }
  return children(schema).every((c) => !isObject(c) || isStrictCompatible(c));
}

/**
 * The JSON Schema keywords Anthropic structured outputs accept (from Anthropic's documentation and
 * its SDK's schema transform); `minItems` only as 0 or 1, `format` only as one of the formats below.
 */
export const ANTHROPIC_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  "$ref",
  "$defs",
  "definitions",
  "type",
  "anyOf",
  "allOf",
  "description",
  "title",
  "const",
  "enum",
  "default",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "minItems",
  "format",
]);

/** The string formats Anthropic structured outputs accept. */
export const ANTHROPIC_STRING_FORMATS: ReadonlySet<string> = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "uri",
  "ipv4",
  "ipv6",
  "uuid",
]);

/** Keywords whose value needs work (sub-schemas, limits); the other accepted ones are copied. */
const STRUCTURAL = new Set(["properties", "additionalProperties", "items", "minItems", "format", "oneOf"]);

function mapEach(record: unknown, fn: (s: Obj) => Obj | undefined): Obj | undefined {
  const out: Obj = {};
  for (const [key, value] of Object.entries(obj(record))) {
    const mapped = fn(obj(value));
    if (mapped === undefined) return undefined;
    out[key] = mapped;
  }
  return out;
}

function mapList(list: unknown, fn: (s: Obj) => Obj | undefined): Obj[] | undefined {
  const out: Obj[] = [];
  for (const value of arr(list)) {
    const mapped = fn(obj(value));
    if (mapped === undefined) return undefined;
    out.push(mapped);
  }
  return out;
}

/** The structural keywords of one node in Anthropic's form; undefined when one cannot be expressed. */
function structure(node: Obj, out: Obj, moved: Obj): boolean {
  if (isObjectType(node)) {
    // Closing an object that lists its properties keeps the meaning (every closed answer is one
    // the client's schema accepts); closing an object that is explicitly open, or a free-form
    // object with no properties, would change what the client asked for.
    const extra = node.additionalProperties;
    if (extra !== undefined && extra !== false) return false;
    if (node.properties === undefined && extra !== false) return false;
    const properties = mapEach(node.properties, anthropicNode);
    if (properties === undefined) return false;
    out.properties = properties;
    out.additionalProperties = false;
  }
  if (node.items !== undefined) {
    const items = anthropicNode(obj(node.items));
    if (items === undefined) return false;
    out.items = items;
  }
  if (node.minItems === 0 || node.minItems === 1) out.minItems = node.minItems;
  else if (node.minItems !== undefined) moved.minItems = node.minItems;
  if (typeof node.format === "string" && ANTHROPIC_STRING_FORMATS.has(node.format)) out.format = node.format;
  else if (node.format !== undefined) moved.format = node.format;
  return true;
}

function anthropicNode(node: Obj): Obj | undefined {
  const out: Obj = {};
  const moved: Obj = {};
  for (const [key, value] of Object.entries(node)) {
    if (STRUCTURAL.has(key)) continue;
    if (ANTHROPIC_SCHEMA_KEYWORDS.has(key)) out[key] = value;
    else moved[key] = value;
  }
  for (const key of ["$defs", "definitions"]) {
    if (node[key] === undefined) continue;
    const defs = mapEach(node[key], anthropicNode);
    if (defs === undefined) return undefined;
    out[key] = defs;
  }
  for (const [key, target] of [
    ["anyOf", "anyOf"],
    ["oneOf", "anyOf"],
    ["allOf", "allOf"],
  ] as const) {
    if (node[key] === undefined) continue;
    const list = mapList(node[key], anthropicNode);
    if (list === undefined) return undefined;
    out[target] = list;
  }
  if (!structure(node, out, moved)) return undefined;
  if (Object.keys(moved).length > 0) {
    const note = Object.entries(moved)
      .map(([k, value]) => `${k}: ${JSON.stringify(value)}`)
      .join(", ");
    out.description = typeof node.description === "string" ? `${node.description}\n\n{${note}}` : `{${note}}`;
  }
  return out;
}

/**
 * The client's schema in the form Anthropic structured outputs accept: every object closed with
 * `additionalProperties: false` (kept meaning only where the object lists its properties — an
 * object open to any key has no such form, and undefined is returned), constraints Anthropic does
 * not enforce (minLength, minimum, pattern, …) written into the description as Anthropic's SDK does.
 */
export function anthropicSchema(schema: JsonSchema): JsonSchema | undefined {
  return anthropicNode(obj(schema));
}

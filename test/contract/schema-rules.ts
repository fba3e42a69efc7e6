// Rules on JSON Schemas that travel inside request bodies, as the providers publish them, for the
// strict outgoing contracts: what OpenAI's strict mode demands of a schema, and what Anthropic's
// structured outputs accept. Written from the API references, independently of the gateway's own
// schema handling (the gateway is what these rules check).
import * as v from "valibot";
// The keyword and format lists are facts shared with the writer; the rules below are the contract's own.
import {
  ANTHROPIC_STRING_FORMATS as ANTHROPIC_FORMATS,
  ANTHROPIC_SCHEMA_KEYWORDS as ANTHROPIC_KEYWORDS,
} from "../../src/wire/translate/json-schema.ts";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Every sub-schema of `schema` with its JSON path (properties, items, anyOf/allOf/oneOf, $defs). */
export function subSchemas(schema: unknown, path = "$"): { path: string; node: Json }[] {
  if (!isObject(schema)) return [];
  const out = [{ path, node: schema }];
  for (const [key, child] of Object.entries(isObject(schema.properties) ? schema.properties : {}))
    out.push(...subSchemas(child, `${path}.properties.${key}`));
  for (const defs of ["$defs", "definitions"]) {
    const table = schema[defs];
    if (isObject(table))
      for (const [key, child] of Object.entries(table))
        out.push(...subSchemas(child, `${path}.${defs}.${key}`));
  }
  if (isObject(schema.items)) out.push(...subSchemas(schema.items, `${path}.items`));
  for (const list of ["anyOf", "allOf", "oneOf"]) {
    const variants = schema[list];
    if (Array.isArray(variants))
      for (const [i, s] of variants.entries()) out.push(...subSchemas(s, `${path}.${list}[${i}]`));
  }
  return out;
}

function isObjectSchema(node: Json): boolean {
  return node.type === "object" || (Array.isArray(node.type) && node.type.includes("object"));
}

/**
 * OpenAI strict mode (Structured Outputs, strict function calling): every object lists all its
 * properties in `required` and sets `additionalProperties: false`. Returns the first violation.
 */
export function strictViolation(schema: unknown): string | undefined {
  for (const { path, node } of subSchemas(schema)) {
    if (!isObjectSchema(node) && node.properties === undefined) continue;
    if (node.additionalProperties !== false) return `${path}: additionalProperties must be false`;
    const required = Array.isArray(node.required) ? node.required : [];
    const props = Object.keys(isObject(node.properties) ? node.properties : {});
    const missing = props.find((p) => !required.includes(p));
    if (missing !== undefined) return `${path}: property "${missing}" is not in required`;
  }
  return undefined;
}

/** Anthropic `output_config.format.schema`: additionalProperties false on every object, known keywords only. */
export function anthropicFormatViolation(schema: unknown): string | undefined {
  for (const { path, node } of subSchemas(schema)) {
    if ((isObjectSchema(node) || node.properties !== undefined) && node.additionalProperties !== false)
      return `${path}: every object needs additionalProperties: false`;
    const unknown = Object.keys(node).find((k) => !ANTHROPIC_KEYWORDS.has(k));
    if (unknown !== undefined) return `${path}: keyword "${unknown}" is not supported`;
    if (node.format !== undefined && !ANTHROPIC_FORMATS.has(String(node.format)))
      return `${path}: string format "${String(node.format)}" is not supported`;
    if (node.minItems !== undefined && node.minItems !== 0 && node.minItems !== 1)
      return `${path}: minItems may only be 0 or 1`;
  }
  return undefined;
}

/** A valibot check from a finder that names what is wrong, or gives undefined when all is well. */
export function rule<T>(find: (value: T) => string | undefined) {
  return v.check<T, (issue: v.CheckIssue<T>) => string>(
    (value) => find(value) === undefined,
    (issue) => find(issue.input) ?? "",
  );
}

/** `strict: true` only with a schema that meets strict mode. */
export function strictRule<T>(what: string, get: (value: T) => { strict?: unknown; schema?: unknown }) {
  return rule<T>((value) => {
    const { strict, schema } = get(value);
    const problem = strict === true ? strictViolation(schema) : undefined;
    return problem === undefined ? undefined : `${what} needs a strict schema: ${problem}`;
  });
}

/** A JSON object value (a JSON Schema, tool input, metadata). */
export const AnyObject = v.custom<Json>(isObject, "expected a JSON object");

/** OpenAI function and schema names: letters, digits, underscores and dashes, at most 64. */
export const OpenAIName = v.pipe(
  v.string(),
  v.regex(/^[a-zA-Z0-9_-]{1,64}$/, "name must match ^[a-zA-Z0-9_-]{1,64}$"),
);

/** A whole number at least `min`. */
export function intAtLeast(min: number, message?: string) {
  return v.pipe(v.number(), v.integer(), v.minValue(min, message));
}

/** A number in [min, max]. */
export function between(min: number, max: number) {
  return v.pipe(v.number(), v.minValue(min), v.maxValue(max));
}

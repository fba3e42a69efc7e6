// Valibot pieces shared by the three text protocols and the checks that run after the one decode
// step (decode.ts): sampling ranges (422), a field of another protocol (400 upstream_error), the
// body being an object.

import * as v from "valibot";
import { isObject } from "../base/plain-object.ts";
import { parseOrThrow } from "./decode.ts";
import { GatewayError } from "./errors.ts";
import type { JsonSchema } from "./text-form.ts";

/** Any JSON object (a JSON Schema, tool input): kept as sent. */
export const JsonObject = v.custom<JsonSchema>((input) => isObject(input), "expected a JSON object");

/** `response_format` (Chat's, and accepted on Responses too): text, json_object or json_schema. */
export const ResponseFormat = v.optional(
  v.nullable(
    v.looseObject({
      type: v.picklist(["text", "json_object", "json_schema"]),
      json_schema: v.optional(v.looseObject({ name: v.string(), schema: v.optional(JsonObject) })),
    }),
  ),
);
/** The sampling fields every text protocol takes, under the same names (ranges: checkSampling). */
export const SamplingFields = {
  temperature: v.optional(v.nullable(v.number())),
  top_p: v.optional(v.nullable(v.number())),
};
export const PositiveInt = v.pipe(v.number(), v.integer("expected a whole number"), v.minValue(1));

/** Reasoning effort values the OpenAI protocols know (the docs name low … xhigh; SDKs send the rest). */
export const Effort = v.picklist(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

/** A numeric field outside its range is a 422 naming it: `temperature must be between 0 and 2, got 3`. */
export function checkRange(field: string, value: number | null | undefined, min: number, max: number): void {
  if (value === null || value === undefined) return;
  if (value >= min && value <= max) return;
  throw new GatewayError("invalid_value", `${field} must be between ${min} and ${max}, got ${value}`, {
    param: field,
  });
}

/** The sampling ranges every text endpoint enforces (docs/api.md: temperature 0–2, top_p 0–1). */
export function checkSampling(body: {
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
}): void {
  checkRange("temperature", body.temperature, 0, 2);
  checkRange("top_p", body.top_p, 0, 1);
}

/**
 * The decode of an OpenAI text body: an object, without the other OpenAI protocol's reasoning
 * field (400 upstream_error, docs/api.md), valid for `schema` (400/422), sampling in range (422).
 */
export function decodeOpenAIText<S extends v.GenericSchema>(
  schema: S,
  json: unknown,
  misplaced: { field: string; hint: string },
): v.InferOutput<S> {
  const body = requireObject(json);
  rejectMisplaced(body, misplaced.field, misplaced.hint);
  const request = parseOrThrow(schema, body);
  checkSampling(request as Parameters<typeof checkSampling>[0]);
  return request;
}

/** A field that belongs to another protocol: 400 with code `upstream_error` (docs/api.md). */
export function rejectMisplaced(body: unknown, field: string, hint: string): void {
  if (typeof body === "object" && body !== null && field in body) {
    throw new GatewayError("misplaced_field", `\`${field}\` is not accepted on this endpoint: ${hint}`, {
      param: field,
    });
  }
}

/** The body must be a JSON object before any schema runs. */
export function requireObject(body: unknown): Record<string, unknown> {
  if (isObject(body)) return body;
  throw new GatewayError("invalid_request", 'The request body must be a JSON object such as {"model": …}.');
}

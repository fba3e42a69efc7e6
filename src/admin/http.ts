// Shared plumbing of the admin API handlers: authentication, JSON bodies and query strings
// parsed by valibot with field-named errors, store errors mapped to 400/404, JSON answers.
import * as v from "valibot";
import { clientLeft } from "../base/client.ts";
import { describeIssues, issuePath } from "../base/validation.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { Handler } from "../http/edge.ts";
import { readBody } from "../request/body.ts";
import { StoreError } from "../store/store.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJson } from "../wire/json.ts";
import { authenticateAdmin } from "./tokens.ts";

const MAX_BODY_BYTES = 64 * 1024;

export interface AdminCall {
  ctx: RequestContext;
  gateway: Gateway;
  params: Record<string, string>;
  /** Who acts, for the audit log. */
  actor: string;
}

type AdminFn = (call: AdminCall) => Promise<unknown>;

/** Wraps an admin operation: authenticates, runs it, answers its result as JSON (201 for `created`). */
export function adminRoute(fn: AdminFn, status = 200): Handler {
  return async (ctx, gateway, params) => {
    const actor = await authenticateAdmin(ctx, gateway);
    // Usage and spending are read from the store: settled records waiting in the journal first.
    await gateway.meter.flush?.();
    // Nothing is changed for a client whose connection closed: it would never hear of it.
    await requireClient(ctx);
    try {
      const body = await fn({ ctx, gateway, params, actor });
      if (body instanceof Response) return body;
      return Response.json(body, { status, headers: { "cache-control": "no-store" } });
    } catch (error) {
      throw fromStoreError(error);
    }
  };
}

/**
 * Throws 499 when the client's connection has closed (src/base/client.ts: a request pipelined
 * behind this one closes it): an operation must not run that no one will be told of.
 */
async function requireClient(ctx: RequestContext): Promise<void> {
  if (await clientLeft(ctx.request.signal)) {
    throw new GatewayError("client_closed", "The client closed the connection before the answer.");
  }
}

export function fromStoreError(error: unknown): unknown {
  if (!(error instanceof StoreError)) return error;
  return error.code === "not_found"
    ? new GatewayError("not_found", error.message, { code: "not_found" })
    : new GatewayError("invalid_request", error.message, { code: "conflict" });
}

function invalid(issues: readonly v.BaseIssue<unknown>[]): GatewayError {
  const first = issues[0];
  return new GatewayError("invalid_request", describeIssues(issues), {
    param: first ? issuePath(first) || null : null,
    code: "invalid_field",
  });
}

/** Reads and validates a JSON body (at most 64 KiB; empty means `{}`), under the gateway's JSON rules. */
export async function readJson<S extends v.GenericSchema>(
  ctx: RequestContext,
  schema: S,
): Promise<v.InferOutput<S>> {
  const bytes = await readBody(ctx.request, MAX_BODY_BYTES);
  await requireClient(ctx);
  const raw = bytes.every(isJsonSpace) ? {} : parseJson(bytes);
  const result = v.safeParse(schema, raw);
  if (!result.success) throw invalid(result.issues);
  return result.output;
}

function isJsonSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** Validates the query string as an object of strings. */
export function readQuery<S extends v.GenericSchema>(ctx: RequestContext, schema: S): v.InferOutput<S> {
  const raw = Object.fromEntries(new URL(ctx.request.url).searchParams);
  const result = v.safeParse(schema, raw);
  if (!result.success) throw invalid(result.issues);
  return result.output;
}

/** A query or body integer given as text, within bounds. */
export function intText(min: number, max: number) {
  return v.pipe(
    v.string(),
    v.regex(/^\d+$/, "expected a whole number"),
    v.transform(Number),
    v.minValue(min),
    v.maxValue(max),
  );
}

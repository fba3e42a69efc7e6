// The access log: one line per request (the gateway's id and the client's, method, path, status, error code, key name, model,
// upstream channels, latency, tokens; the cause of an upstream failure, and every failed upstream
// attempt of a failover: channel, upstream kind, status, error kind, message, time), and every API request
// that was not billed (refusals, listings) on the live feed beside the settled ones. Admin API
// requests are written at `debug`: an open console polls every second and would drown the rest.
//
// A request's facts arrive from three places: authentication (the key, on the request's context),
// the meter (the model, and whether it was admitted; kept by request id from admission to the
// line), and the edge (status, error). A request that was never admitted is written when the
// edge ends it; an admitted one when both the edge and its settlement are done — a stream settles
// after its headers left, and its line then carries the tokens it used.
import type { Principal } from "../auth/keys.ts";
import { log } from "../base/log.ts";
import { type ModelId, toAccountId, toKeyId, toModelId } from "../base/types.ts";
import type { Admission, AdmitInput, Meter, Settlement } from "../billing/contract.ts";
import type { UsageEvent } from "../billing/feed.ts";
import type { Gateway } from "../gateway.ts";
import { asGatewayError, type FailedAttempt } from "../wire/errors.ts";
import type { RequestContext } from "./context.ts";

const ADMIN_PATHS = "/admin/";

/** What the edge knows when it hands the response over. */
interface Ended {
  /** The id the client sent, logged beside the gateway's. */
  clientRequestId: string | undefined;
  method: string;
  path: string;
  status: number;
  code: string | null;
  /** The error message of a 5xx (an upstream failure's cause); the client saw the same text. */
  cause: string | undefined;
  /** Every upstream attempt of a failover that ended in this error (none when there was none). */
  attempts: readonly FailedAttempt[];
  latencyMs: number;
  /** `performance.now()` at the end, to add a stream's time until it settled. */
  at: number;
}

/** What the meter saw of a request, from its admission (or refusal) to its line. */
interface Note {
  keyName: string;
  model: ModelId;
  admitted: boolean;
  settled: Settlement | undefined;
  ended: Ended | undefined;
}

/** Requests that reached the meter and are not written yet, by request id. */
const notes = new Map<string, Note>();
/** `server.access_log`: off, requests still reach the feed but write no line. */
let writing = true;

export function setAccessLog(on: boolean): void {
  writing = on;
}

/** Whether requests get a line (an error's report then only adds detail at `debug`). */
export function accessLogWrites(): boolean {
  return writing;
}

/** Requests noted by the meter whose line is not written yet (tests check none is left behind). */
export function pendingLines(): number {
  return notes.size;
}

/** The path of a request URL without parsing it: what follows the authority, before any query. */
export function pathOf(url: string): string {
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  if (start < 0) return "/";
  const end = url.indexOf("?", start);
  return url.slice(start, end < 0 ? undefined : end);
}

/** The edge's hook: the response (or what was thrown) is final for the client. */
export function requestEnded(
  ctx: RequestContext,
  gateway: Gateway,
  response: Response,
  thrown?: unknown,
): void {
  const error = thrown === undefined ? undefined : asGatewayError(thrown);
  const at = performance.now();
  const ended: Ended = {
    clientRequestId: ctx.clientRequestId,
    method: ctx.request.method,
    path: pathOf(ctx.request.url),
    status: response.status,
    code: error ? (error.code ?? error.kind) : null,
    cause: error && response.status >= 500 ? error.message : undefined,
    attempts: error?.attempts ?? [],
    latencyMs: Math.round(at - ctx.startedAt),
    at,
  };
  const note = notes.get(ctx.requestId);
  if (note?.admitted && note.settled === undefined) {
    note.ended = ended; // its settlement writes the line
    return;
  }
  if (note) notes.delete(ctx.requestId);
  const { principal } = ctx;
  write(ctx.requestId, ended, note, principal);
  if (!note?.admitted && ended.path.startsWith("/v1/"))
    gateway.feed.publish(unbilledEvent(ctx, ended, note, principal));
}

/** A request the edge answered without a router match (404/405): only its line. */
export function unroutedEnded(
  request: Request,
  requestId: string,
  clientRequestId: string | undefined,
  response: Response,
  code: string,
): void {
  const ended: Ended = {
    clientRequestId,
    method: request.method,
    path: pathOf(request.url),
    status: response.status,
    code,
    cause: undefined,
    attempts: [],
    latencyMs: 0,
    at: 0,
  };
  write(requestId, ended, undefined, undefined);
}

/** The meter as the request path sees it: every admission and settlement is noted for the log. */
export function loggedMeter(meter: Meter): Meter {
  const logged: Meter = {
    admit: async (input) => {
      const note: Note = {
        keyName: input.principal.keyName || input.principal.keyId,
        model: input.model.id,
        admitted: false,
        settled: undefined,
        ended: undefined,
      };
      notes.set(input.requestId, note); // a refusal (429) leaves it to the edge's line
      const admission = await meter.admit(input);
      note.admitted = true;
      return settledNoted(admission, input, note);
    },
  };
  if (meter.balance) logged.balance = meter.balance.bind(meter);
  if (meter.flush) logged.flush = meter.flush.bind(meter);
  if (meter.close) logged.close = meter.close.bind(meter);
  if (meter.pingLimiter) logged.pingLimiter = meter.pingLimiter.bind(meter);
  if (meter.budgetFigures) logged.budgetFigures = meter.budgetFigures.bind(meter);
  return logged;
}

function settledNoted(admission: Admission, input: AdmitInput, note: Note): Admission {
  return {
    headers: admission.headers,
    settle: async (result) => {
      try {
        return await admission.settle(result);
      } finally {
        // Even when settling failed: the request is over, its line is due and its note must go.
        noteSettled(input.requestId, note, result);
      }
    },
  };
}

function noteSettled(requestId: string, note: Note, result: Settlement): void {
  if (note.settled !== undefined) return;
  note.settled = result;
  const ended = note.ended;
  if (ended === undefined) return; // the edge writes it
  if (notes.get(requestId) === note) notes.delete(requestId);
  const latencyMs = ended.latencyMs + Math.round(performance.now() - ended.at);
  write(requestId, { ...ended, latencyMs }, note, undefined);
}

function write(
  requestId: string,
  ended: Ended,
  note: Note | undefined,
  principal: Principal | undefined,
): void {
  if (!writing) return;
  const settled = note?.settled;
  const usage = settled?.usage;
  // The admin API's lines (an open console polls it every second) only at --log-level debug.
  const level = ended.path.startsWith(ADMIN_PATHS) ? "debug" : ended.status >= 500 ? "warn" : "info";
  log(level, "request", {
    request_id: requestId,
    client_request_id: ended.clientRequestId,
    method: ended.method,
    path: ended.path,
    status: ended.status,
    code: ended.code ?? undefined,
    key: note?.keyName || principal?.keyName || principal?.keyId || undefined,
    model: note?.model || undefined,
    channel: settled && settled.channels.length > 0 ? settled.channels.join(",") : undefined,
    latency_ms: ended.latencyMs,
    input_tokens: usage?.inputTokens,
    output_tokens: usage?.outputTokens,
    generations: usage && usage.generations > 0 ? usage.generations : undefined,
    error: ended.cause,
    attempts: ended.attempts.length > 0 ? ended.attempts : undefined,
  });
}

function unbilledEvent(
  ctx: RequestContext,
  ended: Ended,
  note: Note | undefined,
  principal: Principal | undefined,
): UsageEvent {
  return {
    requestId: ctx.requestId,
    clientRequestId: ctx.clientRequestId ?? null,
    at: Date.now(),
    method: ended.method,
    endpoint: ended.path,
    keyId: principal?.keyId ?? toKeyId(""),
    keyName: principal?.keyName ?? "",
    accountId: principal?.accountId ?? toAccountId(0),
    model: note?.model ?? toModelId(""),
    stream: false,
    status: ended.status,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    generations: 0,
    costNanos: 0,
    usageSource: "none",
    latencyMs: ended.latencyMs,
    ttfbMs: null,
    channels: [],
    clientAddress: ctx.client?.toString() ?? null,
    errorCode: ended.code,
    unbilled: true,
  };
}

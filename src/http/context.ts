// The per-request context built at the edge: request id, client address, start time, route,
// protocol, and the time spent waiting on upstreams (for the overhead figure, src/metrics/metrics.ts).
import type { Principal } from "../auth/keys.ts";
import { type CidrList, clientAddress, type parseAddress, UnparsableHop } from "../base/ip.ts";
import type { RequestTrace } from "../telemetry/span.ts";
import { type ErrorProtocol, GatewayError } from "../wire/errors.ts";

export type Address = NonNullable<ReturnType<typeof parseAddress>>;

/** Where the upstream HTTP module adds the time a request spent waiting on upstreams. */
export interface UpstreamClock {
  /**
   * Milliseconds spent waiting on upstreams: from sending each attempt until its response headers
   * (non-stream answers: until the whole body is read). Summed over attempts; starts at 0.
   */
  upstreamMs: number;
}

export interface RequestContext extends UpstreamClock {
  request: Request;
  /** The gateway's own id of this request, unique: it keys the log line, the feed event and the usage record. */
  requestId: string;
  /** The id the client sent (`x-client-request-id`, else `x-request-id`), when sane; kept beside `requestId`, never instead of it. */
  clientRequestId?: string | undefined;
  /**
   * The client address after the trusted-proxy rule; undefined if the socket gave none, or if a
   * trusted proxy's `X-Forwarded-For` could not be read (then `refusal` says why).
   */
  client: Address | undefined;
  /** Set when the request must be refused before any route runs (`refuseEarly`): an unreadable `X-Forwarded-For`. */
  refusal?: GatewayError | undefined;
  /** `performance.now()` when the edge took the request. */
  startedAt: number;
  /** Which error shape this route answers with. */
  protocol: ErrorProtocol;
  /** The route pattern that matched (`/v1/models/:id`): the bounded label of the request's metrics. */
  route: string;
  /** Whether the edge counts it in the route metrics (`begin` with a meter); a WebSocket upgrade is not. */
  metered?: boolean;
  /** This request's trace span when telemetry is on (set by the edge). */
  trace?: RequestTrace | undefined;
  /** The calling key once authenticated (set by src/pipeline/authenticate.ts; the access log reads it). */
  principal?: Principal | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

// Generated ids: 16 random hex digits per process, then a 16-hex-digit counter. As unique as a
// random UUID across processes and restarts (a fresh random half each start), without drawing
// 16 random bytes and rewriting a string per request.
const ID_PREFIX = `req_${Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) =>
  b.toString(16).padStart(2, "0"),
).join("")}`;
let idCounter = 0;

/**
 * The client's own id of the request: `x-client-request-id` (OpenAI's name for it), else
 * `x-request-id`, when sane (1–128 of `A-Za-z0-9._:-`). Clients reuse ids, so it never keys
 * anything: it is kept beside the gateway's id and echoed as `x-client-request-id`.
 */
export function clientRequestIdOf(request: Request): string | undefined {
  const given = request.headers.get("x-client-request-id") ?? request.headers.get("x-request-id");
  return given !== null && REQUEST_ID.test(given) ? given : undefined;
}

/** Stamps an answer with the request's ids: the gateway's `x-request-id`, and the client's own id echoed when it sent one. */
export function stampIds(headers: Headers, requestId: string, clientRequestId: string | undefined): void {
  headers.set("x-request-id", requestId);
  if (clientRequestId !== undefined) headers.set("x-client-request-id", clientRequestId);
}

/** A fresh request id (`req_` + 32 hex digits). */
export function newRequestId(): string {
  idCounter++;
  return `${ID_PREFIX}${idCounter.toString(16).padStart(16, "0")}`;
}

export function buildContext(
  request: Request,
  peer: string | undefined,
  trusted: CidrList,
  protocol: ErrorProtocol,
  route: string,
): RequestContext {
  const startedAt = performance.now();
  const forwardedFor = trusted.size === 0 ? null : request.headers.get("x-forwarded-for");
  let client: Address | undefined;
  let refusal: GatewayError | undefined;
  try {
    client = peer === undefined ? undefined : clientAddress(peer, forwardedFor, trusted);
  } catch (thrown) {
    if (!(thrown instanceof UnparsableHop)) throw thrown;
    refusal = new GatewayError(
      "invalid_request",
      `The X-Forwarded-For header's entry ${JSON.stringify(thrown.hop)} is not an IP address (dotted-decimal IPv4 or IPv6), so the client's address is unknown. The proxy in front of the gateway must append the address it received the request from.`,
      { code: "invalid_forwarded_for", param: "X-Forwarded-For" },
    );
  }
  return {
    request,
    requestId: newRequestId(),
    clientRequestId: clientRequestIdOf(request),
    client,
    refusal,
    startedAt,
    protocol,
    route,
    upstreamMs: 0,
    trace: undefined,
  };
}

/** Throws the refusal the context was built with, if any: the first step of every route. */
export function refuseEarly(ctx: RequestContext): void {
  if (ctx.refusal !== undefined) throw ctx.refusal;
}

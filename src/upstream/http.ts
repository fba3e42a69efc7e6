// The one module that owns upstream HTTP, on Bun's fetch: its native keep-alive pool costs a
// fraction of node:http's CPU per call (isolated: 25–27 µs against 136–154 µs). Two gaps of fetch
// are closed here and in src/base/reexec.ts:
// - In-flight cap: fetch queues everything beyond BUN_CONFIG_MAX_HTTP_REQUESTS (256 by default,
//   read only at process start), which would stall the 257th concurrent stream; `serve` re-executes
//   itself once at start with the cap raised.
// - Connect timeout: fetch has no connect event. When no response headers arrived within
//   `connectMs`, a separate TCP connection to the same host and port is tried with the same bound;
//   if that cannot connect either, the call fails with `upstream_connect_timeout`, otherwise the
//   first-byte timeout (src/upstream/guard.ts) keeps governing. A dead host is thus reported as a
//   connect timeout within at most 2 × connectMs.
// The caller's signal cancels the request and, after the headers, its body at once.
import { timeline } from "../telemetry/timeline.ts";
import { GatewayError } from "../wire/errors.ts";

/** Raised when the upstream could not be reached or connected to in time (worth a failover). */
export class UpstreamUnreachable extends GatewayError {}

export interface UpstreamRequest {
  channel: string;
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array | FormData;
  signal: AbortSignal;
  /** Aborts `signal` with a reason; without it, a controller of its own is joined to the signal. */
  abort?: ((reason: Error) => void) | undefined;
  connectMs: number;
}

/** Joins a channel's base URL and an endpoint path. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}${path}`;
}

function unreachable(channel: string, thrown: unknown): UpstreamUnreachable {
  const why = thrown instanceof Error ? thrown.message : String(thrown);
  return new UpstreamUnreachable(
    "upstream_failed",
    `Channel "${channel}" could not be reached (${why}). Retry later.`,
    { code: "upstream_unreachable" },
  );
}

function connectTimeout(request: UpstreamRequest): UpstreamUnreachable {
  return new UpstreamUnreachable(
    "upstream_timeout",
    `Channel "${request.channel}" could not be connected to within ${request.connectMs} ms (connect timeout). Retry later.`,
    { code: "upstream_connect_timeout" },
  );
}

/** Host and port of a target URL; URLs come from the configuration, so there are few. */
const endpoints = new Map<string, { hostname: string; port: number }>();

function endpointOf(raw: string): { hostname: string; port: number } {
  const known = endpoints.get(raw);
  if (known !== undefined) return known;
  const url = new URL(raw);
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  const endpoint = { hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"), port };
  if (endpoints.size < 1024) endpoints.set(raw, endpoint);
  return endpoint;
}

/** Whether a fresh TCP connection to the URL's host and port opens within `ms`. */
function canConnect(raw: string, ms: number): Promise<boolean> {
  const { hostname, port } = endpointOf(raw);
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      resolve(ok);
    };
    Bun.connect({
      hostname,
      port,
      socket: {
        open(socket) {
          socket.end();
          done(true);
        },
        data() {},
        connectError() {
          done(false);
        },
      },
    }).catch(() => done(false));
  });
}

/**
 * POSTs to an upstream; throws UpstreamUnreachable on connection failures, rethrows aborts.
 * `request.headers` is taken over (an identity accept-encoding is added: bodies are relayed as
 * the upstream sent them, never re-encoded).
 */
export async function postUpstream(request: UpstreamRequest): Promise<Response> {
  const { signal } = request;
  if (signal.aborted) throw signal.reason;
  request.headers["accept-encoding"] ??= "identity";
  // The connect probe needs a way to fail the call: the caller's abort, or a controller joined to
  // the caller's signal (two more allocations and a listener per call, so callers pass theirs).
  let abort = request.abort;
  let callSignal = signal;
  if (abort === undefined) {
    const connect = new AbortController();
    abort = (reason) => connect.abort(reason);
    callSignal = AbortSignal.any([signal, connect.signal]);
  }
  const fail = abort;
  let connectFailure: UpstreamUnreachable | undefined;
  // Set once fetch settled: a probe still running then must not fail an answer already flowing.
  let settled = false;
  const timer = setTimeout(() => {
    void canConnect(request.url, request.connectMs).then((ok) => {
      if (ok || settled || signal.aborted) return;
      connectFailure = connectTimeout(request);
      fail(connectFailure);
    });
  }, request.connectMs);
  try {
    if (timeline !== undefined) timeline.event("fetch_sent");
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: callSignal,
      decompress: false,
    });
    if (timeline !== undefined) timeline.event("fetch_headers");
    return response;
  } catch (error) {
    if (connectFailure) throw connectFailure;
    if (signal.aborted) throw signal.reason ?? error;
    throw unreachable(request.channel, error);
  } finally {
    settled = true;
    clearTimeout(timer);
  }
}

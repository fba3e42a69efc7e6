// The one module that owns upstream HTTP. Requests go through node:http(s) with one keep-alive
// Agent per scheme and no cap on parallel sockets: Bun's global fetch queues everything beyond 256
// in-flight requests (BUN_CONFIG_MAX_HTTP_REQUESTS, read only at process start), which would stall
// the 257th concurrent stream behind the others. Here a connect timeout is exact (the socket's
// `connect` event), the caller's signal cancels the request and its body at once, and the answer
// comes back as a web Response whose body honours back-pressure.
import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import { GatewayError } from "../wire/errors.ts";

/** Raised when the upstream could not be reached or connected to in time (worth a failover). */
export class UpstreamUnreachable extends GatewayError {}

export interface UpstreamRequest {
  channel: string;
  url: string;
  headers: Record<string, string>;
  body: string | Uint8Array | FormData;
  signal: AbortSignal;
  connectMs: number;
}

const AGENT_OPTIONS = { keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 1024 };
const agents = { http: new http.Agent(AGENT_OPTIONS), https: new https.Agent(AGENT_OPTIONS) };

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

/** A FormData body as bytes with its multipart content type. */
async function encodeForm(form: FormData): Promise<{ bytes: Uint8Array; type?: string }> {
  const encoded = new Response(form);
  // Read the type first: Bun clears a body-derived content-type once the body is consumed.
  const type = encoded.headers.get("content-type") ?? undefined;
  return { bytes: await encoded.bytes(), type };
}

/** A parsed target URL with its scheme's module and agent; URLs come from config, so few. */
interface Target {
  url: URL;
  client: typeof http | typeof https;
  agent: http.Agent;
}
const targets = new Map<string, Target>();

function targetOf(raw: string): Target {
  const known = targets.get(raw);
  if (known !== undefined) return known;
  const url = new URL(raw);
  const secure = url.protocol === "https:";
  const target = secure
    ? { url, client: https, agent: agents.https }
    : { url, client: http, agent: agents.http };
  if (targets.size < 1024) targets.set(raw, target);
  return target;
}

/** Upstream headers as web Headers: one native copy unless a header repeats (e.g. set-cookie). */
function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  let repeated = false;
  for (const name in raw) if (typeof raw[name] !== "string") repeated = true;
  if (!repeated) return new Headers(raw as Record<string, string>);
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** The response body as a web stream: paused while the reader is behind, destroyed on cancel. */
function bodyStream(res: http.IncomingMessage, req: http.ClientRequest): ReadableStream<Uint8Array> {
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // A Buffer is a Uint8Array: enqueued as it is, no view allocated per chunk.
      res.on("data", (chunk: Buffer) => {
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.on("end", () => {
        ended = true;
        controller.close();
      });
      res.on("close", () => {
        if (!ended) controller.error(new Error("the upstream closed the connection before its answer ended"));
        ended = true;
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      ended = true;
      req.destroy();
    },
  });
}

function watchConnect(req: http.ClientRequest, request: UpstreamRequest): void {
  req.once("socket", (socket: Socket) => {
    if (!socket.connecting) return;
    // Headers and body may go out as two writes: without TCP_NODELAY the body could wait for the
    // first write's ACK (Nagle). Set once per new pooled socket; no first-byte gain was measurable.
    socket.setNoDelay(true);
    const timer = setTimeout(() => req.destroy(connectTimeout(request)), request.connectMs);
    socket.once("connect", () => clearTimeout(timer));
    socket.once("close", () => clearTimeout(timer));
  });
}

/**
 * POSTs to an upstream; throws UpstreamUnreachable on connection failures, rethrows aborts.
 * `request.headers` is taken over (content-length and, for forms, content-type are set on it).
 */
export function postUpstream(request: UpstreamRequest): Promise<Response> {
  const body = request.body;
  if (!(body instanceof FormData)) return send(request, body);
  return encodeForm(body).then(({ bytes, type }) => {
    if (type !== undefined) request.headers["content-type"] = type;
    return send(request, bytes);
  });
}

function send(request: UpstreamRequest, bytes: string | Uint8Array): Promise<Response> {
  const { url, client, agent } = targetOf(request.url);
  const headers = request.headers;
  headers["content-length"] = String(typeof bytes === "string" ? Buffer.byteLength(bytes) : bytes.byteLength);
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(url, { method: "POST", headers, agent, signal: request.signal }, (res) => {
      const status = res.statusCode ?? 502;
      const stream = status === 204 || status === 304 ? null : bodyStream(res, req);
      resolve(
        new Response(stream, {
          status,
          statusText: res.statusMessage ?? "",
          headers: toHeaders(res.headers),
        }),
      );
    });
    watchConnect(req, request);
    req.on("error", (error) => {
      if (request.signal.aborted) reject(request.signal.reason ?? error);
      else reject(error instanceof UpstreamUnreachable ? error : unreachable(request.channel, error));
    });
    req.end(bytes);
  });
}

// The Responses WebSocket mode (docs/api.md): `GET /v1/responses` with an Upgrade. Each
// `response.create` text frame carries a Responses body; it runs through exactly the HTTP path
// (authentication re-checked, limits, billing, routing, translation) as one streamed request, and
// every SSE event of the answer goes back as one text frame with the same JSON. The connection
// remembers its last responses (input + output items), so `previous_response_id` works with
// `store: false`; `generate: false` is a warm-up that only records the input. Errors are nested
// frames `{type:"error", status, error:{type, code, message, param}}`, rendered from the error
// table and reported by the edge like HTTP errors. A connection lives at most
// `[endpoints] websocket_max_seconds` (then `websocket_connection_limit_reached`), and no longer
// than its key stands: a key revoked, expired or removed closes its open connections (1008) within
// KEY_CHECK_MS of the gateway's key cache seeing it. Served by Elysia's `ws` on the route table
// (src/server.ts). It is the edge of each frame (context, access-log line, failure report, as
// src/http/edge.ts does for HTTP) around the Responses row (src/handlers/text.ts, its record src/protocols/responses/), so it
// lives in src/http/ and no row calls back into the edge.
import type { Context } from "elysia";
import { createParser } from "eventsource-parser";
import { log } from "../base/log.ts";
import type { Gateway } from "../gateway.ts";
import { textRow } from "../handlers/text.ts";
import { authenticate, keyStanding } from "../pipeline/authenticate.ts";
import { responses } from "../protocols/responses/index.ts";
import { readBody } from "../request/body.ts";
import { errorFrame, errorResponse, GatewayError } from "../wire/errors.ts";
import { MAX_JSON_DEPTH, tooDeep, valueNestsDeeperThan } from "../wire/json.ts";
import { ZERO_USAGE } from "../wire/text-form.ts";
import { usageToResponses } from "../wire/translate/finish.ts";
import { arr, newId, type Obj, obj, str } from "../wire/translate/narrow.ts";
import { echoRequest, responseShell } from "../wire/translate/responses-writer.ts";
import { buildContext, type RequestContext, refuseEarly } from "./context.ts";
import { begin, failureOf, finish, peers, received, report } from "./edge.ts";

export const RESPONSES_SOCKET_PATH = responses.path;

/** The Responses row each frame runs. */
const createResponse = textRow(responses);

/** What one connection keeps between frames. */
interface SocketState {
  /** The upgrade request's headers (credentials are re-checked with them on every frame). */
  headers: Headers;
  peer: string | undefined;
  remembered: Map<string, { input: unknown[]; output: unknown[] }>;
  queue: Promise<void>;
  busy: boolean;
  expired: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Cancels the response in flight when the socket closes. */
  abort: AbortController;
}

/** The part of Elysia's socket wrapper this mode uses; `raw` is Bun's socket, the same for every event of a connection. */
interface Socket {
  raw: object;
  data: { request: Request };
  remoteAddress: string;
  send(data: string): unknown;
  close(code?: number, reason?: string): unknown;
}

/** The connections' state, by Bun's socket: Elysia hands each event a new wrapper around it. */
const states = new WeakMap<object, SocketState>();

/** How often open connections' keys are checked (the key cache itself reloads every 250 ms). */
export const KEY_CHECK_MS = 500;

/** The open connections (the wrapper of their open event), whose keys are checked while any is open. */
const live = new Map<object, { ws: Socket; gateway: Gateway }>();
let keyCheck: ReturnType<typeof setInterval> | undefined;

/** The close reason (at most 123 bytes) of a connection whose key no longer stands. */
const LAPSED_REASON: Record<string, string> = {
  revoked_api_key: "API key revoked",
  expired_api_key: "API key expired",
};

/** Closes every open connection whose key was revoked, expired or removed, with the refusal as its last frame. */
function checkKeys(): void {
  for (const { ws, gateway } of live.values()) {
    const state = states.get(ws.raw);
    const refusal = state === undefined ? undefined : keyStanding(state.headers, gateway);
    if (refusal === undefined) continue;
    live.delete(ws.raw);
    sendError(gateway, ws, refusal, undefined);
    ws.close(1008, LAPSED_REASON[refusal.code ?? ""] ?? "API key no longer valid");
  }
}

function watchKeys(gateway: Gateway, ws: Socket): void {
  live.set(ws.raw, { ws, gateway });
  keyCheck ??= setInterval(checkKeys, KEY_CHECK_MS);
  keyCheck.unref();
}

function unwatchKeys(ws: Socket): void {
  live.delete(ws.raw);
  if (live.size > 0 || keyCheck === undefined) return;
  clearInterval(keyCheck);
  keyCheck = undefined;
}

function stateOf(ws: Socket): SocketState {
  const state = states.get(ws.raw);
  if (state === undefined) throw new Error("a Responses WebSocket event arrived before open");
  return state;
}

/**
 * Refuses an upgrade that cannot succeed or whose credentials do not hold. The refusal is
 * rendered by the app's error handler with the edge's context left on Elysia's context, so it gets
 * its access-log line and feed event (request id, path, code) like an HTTP refusal.
 */
function checkUpgrade(gateway: Gateway, context: Context): void {
  const { request, server } = context;
  const peer = peers.get(request) ?? server?.requestIP(request)?.address;
  // Not counted in the HTTP route metrics (no meter): a socket is not a request the edge times.
  const ctx = begin(gateway, request, peer, RESPONSES_SOCKET_PATH, undefined);
  Object.assign(context, { ctx });
  // Bun refuses an upgrade without a key; say so in the gateway's error shape rather than Elysia's text.
  if (request.headers.get("sec-websocket-key") === null)
    throw new GatewayError(
      "invalid_request",
      "WebSocket upgrade failed: the Sec-WebSocket-Key header is missing.",
    );
  refuseEarly(ctx);
  authenticate(ctx, gateway);
  // A request re-issued under a routable URL (a short Host, src/http/target.ts) is upgraded as the
  // request the server received: Elysia upgrades `context.request`, and Bun only the original.
  const original = received.get(request);
  if (original !== undefined) context.request = original;
}

function opened(ws: Socket): SocketState {
  const headers = new Headers();
  for (const name of ["authorization", "x-api-key", "x-forwarded-for", "user-agent"]) {
    const value = ws.data.request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return {
    headers,
    peer: ws.remoteAddress || undefined,
    remembered: new Map(),
    queue: Promise.resolve(),
    busy: false,
    expired: false,
    timer: undefined,
    abort: new AbortController(),
  };
}

/** One response.create on its connection. */
interface Turn {
  gateway: Gateway;
  ws: Socket;
  state: SocketState;
  streamId: string | undefined;
}

function send(ws: Socket, payload: Obj, streamId: string | undefined): void {
  ws.send(JSON.stringify(streamId === undefined ? payload : { ...payload, stream_id: streamId }));
}

/** A failure as a frame, rendered from the error table (src/wire/errors.ts) like every HTTP error answer, and reported. */
function sendError(
  gateway: Gateway,
  ws: Socket,
  error: GatewayError,
  streamId: string | undefined,
  ctx?: RequestContext,
): void {
  send(ws, errorFrame(error), streamId);
  report(error, ctx, gateway, false);
}

function closeExpired(gateway: Gateway, ws: Socket): void {
  const message = "The WebSocket connection reached its lifetime limit. Open a new connection to continue.";
  const error = new GatewayError("invalid_request", message, { code: "websocket_connection_limit_reached" });
  sendError(gateway, ws, error, undefined);
  ws.close(1000, "connection lifetime reached");
}

/** Elysia's `ws` options of the Responses mode: the upgrade's checks and the socket's events. */
export function responsesSocket(gateway: Gateway) {
  const limits = gateway.config.endpoints;
  return {
    upgrade: (context: Context) => checkUpgrade(gateway, context),
    open(ws: Socket) {
      const state = opened(ws);
      states.set(ws.raw, state);
      watchKeys(gateway, ws);
      log("info", "responses websocket opened", { client: state.peer });
      state.timer = setTimeout(() => {
        state.expired = true;
        if (!state.busy) closeExpired(gateway, ws);
      }, limits.websocket_max_seconds * 1000);
    },
    // Elysia has parsed a JSON text frame already: an object here, a string when it did not parse.
    message(ws: Socket, message: unknown) {
      const state = stateOf(ws);
      state.queue = state.queue.then(async () => {
        if (state.expired) return;
        state.busy = true;
        try {
          await onFrame(gateway, ws, state, message);
        } catch (thrown) {
          sendError(gateway, ws, failureOf(thrown, undefined), undefined);
        } finally {
          state.busy = false;
          if (state.expired) closeExpired(gateway, ws);
        }
      });
    },
    close(ws: Socket) {
      unwatchKeys(ws);
      const state = states.get(ws.raw);
      if (state === undefined) return;
      clearTimeout(state.timer);
      state.abort.abort();
      state.remembered.clear();
      states.delete(ws.raw);
    },
  };
}

function badFrame(message: string, options: { code?: string; param?: string } = {}): GatewayError {
  return new GatewayError("invalid_request", message, options);
}

async function onFrame(gateway: Gateway, ws: Socket, state: SocketState, message: unknown): Promise<void> {
  if (Buffer.isBuffer(message) || message instanceof ArrayBuffer || ArrayBuffer.isView(message))
    throw badFrame("Binary frames are not accepted: send JSON text frames.");
  if (typeof message === "string")
    throw badFrame("The frame is not valid JSON: send one JSON object per text frame.");
  // The HTTP path refuses such a body before parsing it; a frame arrives parsed, so it is walked.
  if (valueNestsDeeperThan(message, MAX_JSON_DEPTH)) throw tooDeep("frame");
  const frame = obj(message);
  if (frame.type === "response.processed") return;
  const streamId = str(frame.stream_id);
  try {
    await onCreate(gateway, ws, state, frame, streamId);
  } catch (thrown) {
    sendError(gateway, ws, failureOf(thrown, undefined), streamId);
  }
}

async function onCreate(
  gateway: Gateway,
  ws: Socket,
  state: SocketState,
  frame: Obj,
  streamId: string | undefined,
): Promise<void> {
  if (frame.type !== "response.create") {
    const said = `Unsupported frame type ${JSON.stringify(frame.type)}: send {"type":"response.create", ...}.`;
    throw badFrame(said, { code: "unsupported_frame" });
  }
  const { type: _type, stream_id: _stream, generate, previous_response_id: previous, ...body } = frame;
  const input =
    typeof body.input === "string"
      ? [{ type: "message", role: "user", content: body.input }]
      : arr(body.input);
  let history: unknown[] = [];
  if (typeof previous === "string") {
    const earlier = state.remembered.get(previous);
    if (earlier === undefined) {
      const said = `previous_response_id ${previous} is not known on this connection (it remembers its last ${gateway.config.endpoints.websocket_remembered_responses} responses). Send the full input instead.`;
      throw badFrame(said, { code: "previous_response_not_found", param: "previous_response_id" });
    }
    history = [...earlier.input, ...earlier.output];
  }
  const fullInput = [...history, ...input];
  const turn: Turn = { gateway, ws, state, streamId };
  if (generate === false) return warmUp(turn, body, fullInput);
  await runCreate(turn, { ...body, input: fullInput, stream: true }, fullInput);
}

function remember(
  gateway: Gateway,
  state: SocketState,
  id: string,
  input: unknown[],
  output: unknown[],
): void {
  const map = state.remembered;
  map.set(id, { input, output });
  while (map.size > gateway.config.endpoints.websocket_remembered_responses) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
}

/** `generate: false`: no model call; the input is remembered under a new response id. */
function warmUp({ gateway, ws, state, streamId }: Turn, body: Obj, input: unknown[]): void {
  const request = new Request(`http://gateway.internal${RESPONSES_SOCKET_PATH}`, { headers: state.headers });
  authenticate(
    buildContext(request, state.peer, gateway.trustedProxies, "openai", RESPONSES_SOCKET_PATH),
    gateway,
  );
  const id = `resp_${newId()}`;
  const shell = echoRequest(responseShell(id, body.model, Math.floor(Date.now() / 1000)), body);
  const response = {
    ...shell,
    status: "completed",
    completed_at: shell.created_at,
    usage: usageToResponses(ZERO_USAGE),
  };
  send(ws, { type: "response.created", sequence_number: 0, response: shell }, streamId);
  send(ws, { type: "response.completed", sequence_number: 1, response }, streamId);
  remember(gateway, state, id, input, []);
}

/** Runs one response.create through the HTTP path's handler and relays its events as frames. */
async function runCreate(turn: Turn, body: Obj, input: unknown[]): Promise<void> {
  const { gateway, ws, state, streamId } = turn;
  const headers = new Headers(state.headers);
  headers.set("content-type", "application/json");
  const request = new Request(`http://gateway.internal${RESPONSES_SOCKET_PATH}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: state.abort.signal,
  });
  // The edge's context, log line and failure report, without the HTTP route's metrics (as before).
  const ctx = begin(gateway, request, state.peer, RESPONSES_SOCKET_PATH, undefined);
  let response: Response;
  try {
    const raw = await readBody(request, gateway.config.text.max_body_bytes);
    response = finish(ctx, gateway, await createResponse(ctx, gateway, raw), undefined);
  } catch (thrown) {
    const error = failureOf(thrown, ctx);
    finish(ctx, gateway, errorResponse(error, "openai", ctx.requestId), undefined, error);
    sendError(gateway, ws, error, streamId, ctx);
    if (error.status === 401 || error.status === 403) ws.close(1008, "credential refused");
    return;
  }
  if (response.body === null) return;
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (e) => {
      // Most events go out as they came; only the final one (remembered for previous_response_id)
      // and events that must carry a stream_id are parsed.
      const final =
        e.event === undefined || e.event === "response.completed" || e.event === "response.incomplete";
      if (streamId === undefined && !final) {
        ws.send(e.data);
        return;
      }
      const event = obj(JSON.parse(e.data));
      send(ws, event, streamId);
      if (event.type === "response.completed" || event.type === "response.incomplete") {
        const done = obj(event.response);
        const id = str(done.id);
        if (id !== undefined) remember(gateway, state, id, input, arr(done.output));
      }
    },
  });
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
}

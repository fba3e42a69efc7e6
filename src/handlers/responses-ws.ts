// The Responses WebSocket mode (WIRE.md §1.7, §7.3): `GET /v1/responses` with an Upgrade. Each
// `response.create` text frame carries a Responses body; it runs through exactly the HTTP path
// (authentication re-checked, limits, billing, routing, translation) as one streamed request, and
// every SSE event of the answer goes back as one text frame with the same JSON. The connection
// remembers its last responses (input + output items), so `previous_response_id` works with
// `store: false`; `generate: false` is a warm-up that only records the input. Errors are nested
// frames `{type:"error", status, error:{type, code, message, param}}`. A connection lives at most
// `[endpoints] websocket_max_seconds` (then `websocket_connection_limit_reached`).
import type { ServerWebSocket } from "bun";
import { createParser } from "eventsource-parser";
import type { Gateway } from "../gateway.ts";
import { buildContext } from "../http/context.ts";
import { peers, runHandler } from "../http/edge.ts";
import { log } from "../log.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { asGatewayError, errorResponse, GatewayError } from "../wire/errors.ts";
import { ZERO_USAGE } from "../wire/text-form.ts";
import { usageToResponses } from "../wire/translate/finish.ts";
import { arr, newId, type Obj, obj, str } from "../wire/translate/narrow.ts";
import { echoRequest, responseShell } from "../wire/translate/responses-writer.ts";
import { createResponse } from "./responses.ts";

export interface SocketData {
  /** The upgrade request's headers (credentials are re-checked with them on every frame). */
  headers: Headers;
  peer: string | undefined;
  openedAt: number;
  remembered: Map<string, { input: unknown[]; output: unknown[] }>;
  queue: Promise<void>;
  busy: boolean;
  expired: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Cancels the response in flight when the socket closes. */
  abort: AbortController;
}

type Socket = ServerWebSocket<SocketData>;

/** Whether a request asks for the Responses WebSocket mode. */
export function isResponsesUpgrade(request: Request): boolean {
  return (
    request.method === "GET" &&
    request.headers.get("upgrade")?.toLowerCase() === "websocket" &&
    new URL(request.url).pathname.replace(/\/+$/, "") === "/v1/responses"
  );
}

/** Authenticates the upgrade; the error response when refused, else the socket's initial data. */
export function upgradeData(
  gateway: Gateway,
  request: Request,
  peer: string | undefined,
): SocketData | Response {
  const ctx = buildContext(request, peer, gateway.trustedProxies, "openai");
  try {
    authenticate(ctx, gateway);
  } catch (thrown) {
    return errorResponse(asGatewayError(thrown), "openai", ctx.requestId);
  }
  const headers = new Headers();
  for (const name of ["authorization", "x-api-key", "x-forwarded-for", "user-agent"]) {
    const value = request.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return {
    headers,
    peer,
    openedAt: Date.now(),
    remembered: new Map(),
    queue: Promise.resolve(),
    busy: false,
    expired: false,
    timer: undefined,
    abort: new AbortController(),
  };
}

function send(ws: Socket, payload: Obj, streamId: string | undefined): void {
  ws.send(JSON.stringify(streamId === undefined ? payload : { ...payload, stream_id: streamId }));
}

function errorFrame(ws: Socket, status: number, error: Obj, streamId: string | undefined): void {
  send(ws, { type: "error", status, error: { param: null, ...error } }, streamId);
}

function closeExpired(ws: Socket): void {
  const message = "The WebSocket connection reached its lifetime limit. Open a new connection to continue.";
  errorFrame(
    ws,
    400,
    { type: "invalid_request_error", code: "websocket_connection_limit_reached", message },
    undefined,
  );
  ws.close(1000, "connection lifetime reached");
}

/** The Bun WebSocket handlers of the Responses mode. */
export function responsesSocketHandlers(gateway: Gateway) {
  const limits = gateway.config.endpoints;
  return {
    perMessageDeflate: true,
    open(ws: Socket) {
      log("info", "responses websocket opened", { client: ws.data.peer });
      ws.data.timer = setTimeout(() => {
        ws.data.expired = true;
        if (!ws.data.busy) closeExpired(ws);
      }, limits.websocket_max_seconds * 1000);
    },
    message(ws: Socket, message: string | Buffer) {
      ws.data.queue = ws.data.queue.then(async () => {
        if (ws.data.expired) return;
        ws.data.busy = true;
        try {
          await onFrame(gateway, ws, message);
        } catch (thrown) {
          const error = asGatewayError(thrown);
          errorFrame(
            ws,
            error.status,
            { type: "server_error", code: error.code, message: error.message },
            undefined,
          );
        } finally {
          ws.data.busy = false;
          if (ws.data.expired) closeExpired(ws);
        }
      });
    },
    close(ws: Socket) {
      clearTimeout(ws.data.timer);
      ws.data.abort.abort();
      ws.data.remembered.clear();
    },
  };
}

function badFrame(message: string): GatewayError {
  return new GatewayError("invalid_request", message);
}

async function onFrame(gateway: Gateway, ws: Socket, message: string | Buffer): Promise<void> {
  if (typeof message !== "string") throw badFrame("Binary frames are not accepted: send JSON text frames.");
  let frame: Obj;
  try {
    frame = obj(JSON.parse(message));
  } catch {
    throw badFrame("The frame is not valid JSON: send one JSON object per text frame.");
  }
  if (frame.type === "response.processed") return;
  const streamId = str(frame.stream_id);
  if (frame.type !== "response.create") {
    const said = `Unsupported frame type ${JSON.stringify(frame.type)}: send {"type":"response.create", ...}.`;
    errorFrame(
      ws,
      400,
      { type: "invalid_request_error", code: "unsupported_frame", message: said },
      streamId,
    );
    return;
  }
  const { type: _type, stream_id: _stream, generate, previous_response_id: previous, ...body } = frame;
  const input =
    typeof body.input === "string"
      ? [{ type: "message", role: "user", content: body.input }]
      : arr(body.input);
  let history: unknown[] = [];
  if (typeof previous === "string") {
    const earlier = ws.data.remembered.get(previous);
    if (earlier === undefined) {
      const said = `previous_response_id ${previous} is not known on this connection (it remembers its last ${gateway.config.endpoints.websocket_remembered_responses} responses). Send the full input instead.`;
      errorFrame(
        ws,
        400,
        {
          type: "invalid_request_error",
          code: "previous_response_not_found",
          message: said,
          param: "previous_response_id",
        },
        streamId,
      );
      return;
    }
    history = [...earlier.input, ...earlier.output];
  }
  const fullInput = [...history, ...input];
  if (generate === false) return warmUp(gateway, ws, body, fullInput, streamId);
  await runCreate(gateway, ws, { ...body, input: fullInput, stream: true }, fullInput, streamId);
}

function remember(gateway: Gateway, ws: Socket, id: string, input: unknown[], output: unknown[]): void {
  const map = ws.data.remembered;
  map.set(id, { input, output });
  while (map.size > gateway.config.endpoints.websocket_remembered_responses) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
}

/** `generate: false`: no model call; the input is remembered under a new response id. */
function warmUp(
  gateway: Gateway,
  ws: Socket,
  body: Obj,
  input: unknown[],
  streamId: string | undefined,
): void {
  const request = new Request("http://gateway.internal/v1/responses", { headers: ws.data.headers });
  authenticate(buildContext(request, ws.data.peer, gateway.trustedProxies, "openai"), gateway);
  const id = `resp_${newId()}`;
  const shell = echoRequest(responseShell(id, body.model, Math.floor(Date.now() / 1000)), body);
  const response = {
    ...shell,
    status: "completed",
    completed_at: shell.created_at,
    usage: usageToResponses(ZERO_USAGE),
  };
  send(
    ws,
    {
      type: "response.created",
      sequence_number: 0,
      response: shell,
    },
    streamId,
  );
  send(ws, { type: "response.completed", sequence_number: 1, response }, streamId);
  remember(gateway, ws, id, input, []);
}

/** Runs one response.create through the HTTP path and relays its events as frames. */
async function runCreate(
  gateway: Gateway,
  ws: Socket,
  body: Obj,
  input: unknown[],
  streamId: string | undefined,
): Promise<void> {
  const headers = new Headers(ws.data.headers);
  headers.set("content-type", "application/json");
  const request = new Request("http://gateway.internal/v1/responses", {
    method: "POST",
    headers,
    body: JSON.stringify(body),
    signal: ws.data.abort.signal,
  });
  if (ws.data.peer !== undefined) peers.set(request, ws.data.peer);
  const response = await runHandler(createResponse, "openai", gateway, request, {});
  if (!response.ok || response.body === null) {
    const error = obj(obj(await response.json().catch(() => ({}))).error);
    errorFrame(ws, response.status, error, streamId);
    if (response.status === 401 || response.status === 403) ws.close(1008, "credential refused");
    return;
  }
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
        if (id !== undefined) remember(gateway, ws, id, input, arr(done.output));
      }
    },
  });
  for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }));
}

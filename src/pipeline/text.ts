// The text request path shared by /v1/responses, /v1/chat/completions and /v1/messages:
// read (413) → authenticate → decode (400/422) → model (400/403) → size (413), then inside the
// billing layer (src/billing/metered.ts: admit … settle exactly once on every path) route → call
// upstream → relay (JSON or SSE).
import type { Principal } from "../auth/keys.ts";
import type { AdmitInput } from "../billing/meter.ts";
import { type MeteredAnswer, metered } from "../billing/metered.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { countPromptTokens } from "../catalog/token-thread.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { clientTraceHeaders } from "../telemetry/propagate.ts";
import { describeRequest } from "../telemetry/request.ts";
import type { Channel } from "../upstream/channels.ts";
import type { TextCall } from "../upstream/text-call.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJson } from "../wire/json.ts";
import { type IrRequest, TEXT_PATHS, type TextProtocol, type TextView } from "../wire/text-form.ts";
import { writeRequest } from "../wire/translate/index.ts";
import { MIN_OUTPUT_TOKENS } from "../wire/translate/responses-request.ts";
import { authenticate } from "./authenticate.ts";
import { callChannels, upstreamEnv, upstreamWaitMs } from "./call.ts";
import { textChannelsFor, upstreamProtocol } from "./channels.ts";
import { checkForwardable } from "./forwarding.ts";
import { requireModel } from "./model.ts";
import { respond } from "./relay/respond.ts";

/** A decoded request: the neutral view plus what is needed to forward it unchanged. */
export interface DecodedText {
  view: TextView;
  /** The parsed body (unknown fields kept), for re-serializing when something must change. */
  body: Record<string, unknown>;
  /** How many answers the request asks for (Chat `n`); admission reserves output for each. */
  choices?: number;
  /** Extra fields to set on the forwarded body (e.g. Chat `stream_options.include_usage`). */
  overrides?: Record<string, unknown>;
  anthropicVersion?: string;
  anthropicBeta?: string;
  /** The request in the internal form, for a channel that speaks another protocol. */
  ir(): IrRequest;
}

export interface TextEndpoint {
  path: string;
  decode(json: unknown, headers: Headers): DecodedText;
}

/**
 * The model must exist, be allowed to the key (400/403), be a text model, and be served on this
 * endpoint: every text model is, unless `[endpoints.models]` restricts it (400 naming where it is).
 */
export function requireTextModel(
  principal: Principal,
  gateway: Gateway,
  id: string,
  protocol: TextProtocol,
): ModelInfo {
  const model = requireModel(principal, id);
  if (model.family === "image") {
    throw new GatewayError(
      "invalid_request",
      `The model \`${model.id}\` is an image model: call POST /v1/images/generations or /v1/images/edits.`,
      { param: "model" },
    );
  }
  const allowed = gateway.config.endpoints.models[model.id];
  if (allowed !== undefined && !allowed.includes(protocol)) {
    const where = allowed.map((p) => TEXT_PATHS[p]).join(" or ");
    throw new GatewayError(
      "invalid_request",
      `The model \`${model.id}\` is not served on ${TEXT_PATHS[protocol]} by this gateway: call ${where}.`,
      { param: "model" },
    );
  }
  return model;
}

/** The model checks of a text request; `tokens` is its prompt's token count, counted once by the caller. */
function checkModel(principal: Principal, gateway: Gateway, view: TextView, tokens: number): ModelInfo {
  const model = requireTextModel(principal, gateway, view.model, view.protocol);
  if (tokens > model.contextTokens) {
    throw new GatewayError(
      "too_large",
      `The input is ${tokens} tokens, more than the ${model.contextTokens}-token context of \`${model.id}\`. Shorten the input.`,
    );
  }
  const max = view.maxOutputTokens;
  if (max !== undefined && max > model.maxOutputTokens) {
    const field = view.protocol === "responses" ? "max_output_tokens" : "max_tokens";
    throw new GatewayError(
      "invalid_request",
      `${field} is ${max}, above the ${model.maxOutputTokens} \`${model.id}\` allows.`,
      {
        param: field,
      },
    );
  }
  return model;
}

/**
 * The output tokens admission reserves for: the client's cap (else the model's) for every choice,
 * and never less than a Responses upstream may raise a smaller cap to, so no answer the gateway
 * can receive settles above its reservation.
 */
export function worstOutputTokens(requested: number | undefined, model: ModelInfo, choices: number): number {
  const cap = requested === undefined ? model.maxOutputTokens : Math.max(requested, MIN_OUTPUT_TOKENS);
  return cap * choices;
}

/**
 * The forwarded body: in the client's protocol, the client's bytes untouched unless the model id
 * or an override changes; in another protocol, the request translated through the internal form.
 */
function bodyFor(
  channel: Channel,
  target: TextProtocol,
  decoded: DecodedText,
  raw: Uint8Array,
  model: ModelInfo,
): Pick<TextCall, "body" | "json"> {
  const mapped = channel.upstreamModel(decoded.view.model);
  if (target !== decoded.view.protocol) {
    const json = writeRequest(target, decoded.ir(), mapped, model.maxOutputTokens);
    return { body: JSON.stringify(json), json };
  }
  if (mapped === decoded.view.model && decoded.overrides === undefined)
    return { body: raw, json: decoded.body };
  const json = { ...decoded.body, ...decoded.overrides, model: mapped };
  return { body: JSON.stringify(json), json };
}

export async function serveText(
  ctx: RequestContext,
  gateway: Gateway,
  endpoint: TextEndpoint,
  raw: Uint8Array,
): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const decoded = endpoint.decode(parseJson(raw), ctx.request.headers);
  const { view } = decoded;
  const tools = checkForwardable(view.protocol, decoded.body, gateway.config.billing.tools);
  const inputTokens = await countPromptTokens(view.promptText);
  const model = checkModel(principal, gateway, view, inputTokens);
  const { trace } = ctx;
  describeRequest(trace, view, principal);
  const admit: AdmitInput = {
    requestId: ctx.requestId,
    principal,
    model,
    endpoint: endpoint.path,
    method: ctx.request.method,
    stream: view.stream,
    clientAddress: ctx.client?.toString(),
    endUser: typeof decoded.body.user === "string" ? decoded.body.user : undefined,
    worstCase: {
      kind: "text",
      inputTokens,
      maxOutputTokens: worstOutputTokens(view.maxOutputTokens, model, decoded.choices ?? 1),
      tools,
    },
  };
  return metered(
    gateway.meter,
    admit,
    trace,
    (tried) => answerText(ctx, gateway, { decoded, raw, model, inputTokens }, tried),
    undefined,
    ctx.request.signal,
  );
}

/** A decoded, checked and admitted text request, as route → call → relay need it. */
interface Admitted {
  decoded: DecodedText;
  /** The client's body bytes, forwarded unchanged when nothing in them must change. */
  raw: Uint8Array;
  model: ModelInfo;
  inputTokens: number;
}

/**
 * The work inside the billing layer: route (the channels that serve the model), call (failover),
 * relay (JSON or SSE). `tried` collects the channels called. The time spent waiting on upstreams
 * goes to the overhead figure, whichever way the work ends.
 */
async function answerText(
  ctx: RequestContext,
  gateway: Gateway,
  request: Admitted,
  tried: string[],
): Promise<MeteredAnswer> {
  const { decoded, raw, model } = request;
  const { view } = decoded;
  const { trace } = ctx;
  let calledAt: number | undefined;
  try {
    const channels = textChannelsFor(gateway, model, view.protocol);
    const call = (channel: Channel): TextCall => {
      const target = upstreamProtocol(channel, view.protocol) ?? view.protocol;
      return {
        protocol: target,
        ...bodyFor(channel, target, decoded, raw, model),
        stream: view.stream,
        anthropicVersion: decoded.anthropicVersion,
        anthropicBeta: decoded.anthropicBeta,
        signal: ctx.request.signal,
      };
    };
    calledAt = performance.now();
    const answered = await callChannels(channels, call, upstreamEnv(gateway), tried, {
      traffic: gateway.traffic,
      trace,
      passThrough: trace === undefined ? clientTraceHeaders(ctx.request.headers) : undefined,
      stream: view.stream,
      model: view.model,
    });
    const answer = respond({
      ctx,
      gateway,
      view,
      request: decoded.body,
      inputTokens: request.inputTokens,
      answered,
    });
    ctx.upstreamMs += upstreamWaitMs(answered, tried.length, calledAt);
    return answer;
  } catch (thrown) {
    // No answer: the failover's time went to waiting on upstreams that failed.
    if (calledAt !== undefined) ctx.upstreamMs += performance.now() - calledAt;
    throw thrown;
  }
}

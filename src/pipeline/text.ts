// The text request path shared by /v1/responses, /v1/chat/completions and /v1/messages:
// read (413) → authenticate → decode (400/422) → model (400/403) → size (413), then inside the
// billing layer (src/billing/layer.ts: admit … settle exactly once on every path) route → call
// upstream → relay (JSON or SSE).

import type { Principal } from "../auth/keys.ts";
import { log } from "../base/log.ts";
import { type MeteredAnswer, metered } from "../billing/layer.ts";
import { CACHE_HEADER, type CachePlan } from "../cache/cache.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { countPromptTokens } from "../catalog/token-thread.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { DecodedText, TextAdapter } from "../protocols/adapter.ts";
import { protocolOf, type TextProtocol } from "../protocols/index.ts";
import { clientTraceHeaders } from "../telemetry/propagate.ts";
import { describeRequest } from "../telemetry/request.ts";
import { timeline } from "../telemetry/timeline.ts";
import type { Channel } from "../upstream/channels.ts";
import type { TextCall } from "../upstream/text-call.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJsonBody } from "../wire/json.ts";
import type { TextView } from "../wire/text-form.ts";
import { MIN_OUTPUT_TOKENS } from "../wire/translate/responses-request.ts";
import { admitInput } from "./admit.ts";
import { authenticate } from "./authenticate.ts";
import { serveCached } from "./cached.ts";
import { callChannels, upstreamEnv, upstreamWaitMs } from "./call.ts";
import { textChannelsFor, upstreamProtocol } from "./channels.ts";
import { checkForwardable } from "./forwarding.ts";
import { reservedInputTokens } from "./input-bound.ts";
import { requireFamily, requireModel } from "./model.ts";
import type { Keep } from "./relay/keep.ts";

/** The families the text endpoints serve (a messages model is called in Messages, translated when needed). */
const TEXT_FAMILIES = ["text", "messages"] as const;

import { respond } from "./relay/respond.ts";

/** A text endpoint: its protocol's record (src/protocols/), of which the run reads its path and decode. */
export type TextEndpoint = Pick<TextAdapter, "path" | "decode">;

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
  const { path } = protocolOf(protocol);
  const model = requireFamily(requireModel(principal, id, gateway.aliases), TEXT_FAMILIES, path);
  const allowed = gateway.config.endpoints.models[model.id];
  if (allowed !== undefined && !allowed.includes(protocol)) {
    const where = allowed.map((p) => protocolOf(p).path).join(" or ");
    throw new GatewayError(
      "invalid_request",
      `The model \`${model.id}\` is not served on ${path} by this gateway: call ${where}.`,
      { param: "model" },
    );
  }
  return model;
}

/**
 * The model checks of a text request; `tokens` is its prompt's token count, counted once by the
 * caller up to the model's context (past it, only that it is past).
 */
function checkModel(model: ModelInfo, view: TextView, tokens: number): ModelInfo {
  if (tokens > model.contextTokens) {
    throw new GatewayError(
      "too_large",
      `The input is more than the ${model.contextTokens}-token context of \`${model.id}\`. Shorten the input.`,
      { param: protocolOf(view.protocol).inputField },
    );
  }
  const max = view.maxOutputTokens;
  if (max !== undefined && max > model.maxOutputTokens) {
    const field = protocolOf(view.protocol).outputCapField;
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
 * or an override changes, or the bytes repeat a key (an upstream keeping the first value would run
 * another request than the one admitted: what was admitted is sent instead); in another protocol,
 * the request translated through the internal form.
 */
function bodyFor(channel: Channel, target: TextProtocol, request: Admitted): Pick<TextCall, "body" | "json"> {
  const { decoded, raw, model } = request;
  // The catalog id, not the client's name: an alias is sent upstream as its target.
  const mapped = channel.upstreamModel(model.id);
  if (target !== decoded.view.protocol) {
    const json = protocolOf(target).translate.writeRequest(decoded.ir(), mapped, model.maxOutputTokens);
    return { body: JSON.stringify(json), json };
  }
  if (mapped === decoded.view.model && decoded.overrides === undefined && !request.duplicateKeys)
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
  if (timeline !== undefined) timeline.stage(ctx, "authenticated");
  const parsed = parseJsonBody(raw);
  const decoded = endpoint.decode(parsed.json, ctx.request.headers);
  const { view } = decoded;
  const tools = checkForwardable(view.protocol, decoded.body, gateway.config.billing.tools);
  const textModel = requireTextModel(principal, gateway, view.model, view.protocol);
  const inputTokens = await countPromptTokens(view.promptText, textModel.contextTokens, principal.keyId);
  const model = checkModel(textModel, view, inputTokens);
  const reserved = reservedInputTokens(gateway, {
    protocol: view.protocol,
    model,
    body: decoded.body,
    promptTokens: inputTokens,
    ir: decoded.ir,
  });
  const { trace } = ctx;
  describeRequest(trace, view, principal);
  if (timeline !== undefined) timeline.stage(ctx, "decoded");
  const outputCap = worstOutputTokens(view.maxOutputTokens, model, decoded.choices ?? 1);
  const admit = admitInput(ctx, {
    principal,
    model,
    endpoint: endpoint.path,
    stream: view.stream,
    endUser: typeof decoded.body.user === "string" ? decoded.body.user : undefined,
    alias: view.model === model.id ? undefined : view.model,
    worstCase: {
      kind: "text",
      inputTokens: reserved,
      maxOutputTokens: outputCap,
      tools,
    },
  });
  const admitted: Admitted = {
    decoded,
    raw,
    model,
    inputTokens,
    outputCap,
    duplicateKeys: parsed.duplicateKeys,
  };
  // Several choices (Chat `n`) are not cached: a stream is replayed as one answer.
  const plan =
    (decoded.choices ?? 1) > 1
      ? undefined
      : gateway.cache.plan(principal, ctx.request.headers, endpoint.path, model.id, decoded.body);
  if (plan === undefined) {
    return metered(
      gateway.meter,
      admit,
      trace,
      (tried) => answerText(ctx, gateway, admitted, tried),
      undefined,
      ctx.request.signal,
    );
  }
  const hit = await cacheLookup(gateway, plan);
  if (hit !== undefined && hit.protocol === view.protocol) {
    gateway.traffic.cache("hit");
    const response = await serveCached(ctx, gateway, admit, plan, hit, view, decoded.body);
    response.headers.set(CACHE_HEADER, "hit");
    return response;
  }
  const result = plan.read ? "miss" : "bypass";
  gateway.traffic.cache(result);
  const keep = plan.write ? keeper(gateway, plan) : undefined;
  const response = await metered(
    gateway.meter,
    admit,
    trace,
    (tried) => answerText(ctx, gateway, { ...admitted, keep }, tried),
    undefined,
    ctx.request.signal,
  );
  response.headers.set(CACHE_HEADER, result);
  return response;
}

/** The stored answer of a plan, if any; a cache that cannot be read is a miss, not a failure. */
async function cacheLookup(gateway: Gateway, plan: CachePlan) {
  try {
    return await gateway.cache.get(plan);
  } catch (error) {
    log("warn", "response cache unreadable; answering from upstream", { error: String(error) });
    return undefined;
  }
}

/**
 * Stores a whole answer in the background, once the answer is on its way (setImmediate: after the
 * response's bytes were handed to the socket): the client never waits on the cache's write.
 */
function keeper(gateway: Gateway, plan: CachePlan): Keep {
  return (answer) => setImmediate(() => store(gateway, plan, answer));
}

function store(gateway: Gateway, plan: CachePlan, answer: Parameters<Keep>[0]): void {
  gateway.cache.put(plan, answer).then(
    (stored) => {
      if (stored) gateway.traffic.cache("stored");
    },
    (error: unknown) =>
      log("warn", "response cache: an answer could not be stored", { error: String(error) }),
  );
}

/** A decoded, checked and admitted text request, as route → call → relay need it. */
interface Admitted {
  decoded: DecodedText;
  /** The client's body bytes, forwarded unchanged when nothing in them must change. */
  raw: Uint8Array;
  model: ModelInfo;
  inputTokens: number;
  /** The output tokens admission reserved for. */
  outputCap: number;
  /** The body's text repeats a key: it is forwarded re-serialised from what was admitted. */
  duplicateKeys: boolean;
  /** Hands a whole answer to the response cache (absent: the cache is off for this request). */
  keep?: Keep | undefined;
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
  const { decoded, model } = request;
  const { view } = decoded;
  const { trace } = ctx;
  let calledAt: number | undefined;
  if (timeline !== undefined) timeline.stage(ctx, "admitted");
  try {
    const channels = textChannelsFor(gateway, model, view.protocol);
    const call = (channel: Channel): TextCall => {
      const target = upstreamProtocol(channel, view.protocol) ?? view.protocol;
      return {
        protocol: target,
        ...bodyFor(channel, target, request),
        stream: view.stream,
        anthropicVersion: decoded.anthropicVersion,
        anthropicBeta: decoded.anthropicBeta,
        signal: ctx.request.signal,
      };
    };
    calledAt = performance.now();
    if (timeline !== undefined) timeline.stage(ctx, "upstream_sent");
    const answered = await callChannels(channels, call, upstreamEnv(gateway), tried, {
      traffic: gateway.traffic,
      trace,
      passThrough: trace === undefined ? clientTraceHeaders(ctx.request.headers) : undefined,
      stream: view.stream,
      model: model.id,
    });
    if (timeline !== undefined) timeline.stage(ctx, "upstream_answered");
    const answer = respond({
      ctx,
      gateway,
      view,
      request: decoded.body,
      model,
      inputTokens: request.inputTokens,
      outputCap: request.outputCap,
      answered,
      keep: request.keep,
    });
    ctx.upstreamMs += upstreamWaitMs(answered, tried.length, calledAt);
    if (timeline !== undefined) timeline.stage(ctx, "answered");
    return answer;
  } catch (thrown) {
    // No answer: the failover's time went to waiting on upstreams that failed.
    if (calledAt !== undefined) ctx.upstreamMs += performance.now() - calledAt;
    throw thrown;
  }
}

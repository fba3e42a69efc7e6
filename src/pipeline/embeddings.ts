// The embeddings run after decoding, inside the billing layer (src/billing/layer.ts) as the
// text path: admit (RPM, concurrency, the worst case: every counted input token at the model's
// price), route to the channels that serve embeddings (those taking token-id input when the
// request holds token ids), call them through the shared failover (media-call.ts), answer one
// JSON list in the client's encoding, and settle exactly once: the upstream's `prompt_tokens`
// when it reports them ("reported"), else the tokens the gateway counted ("estimated").

import * as v from "valibot";
import type { Principal } from "../auth/keys.ts";
import { describeIssues } from "../base/validation.ts";
import { type MeteredAnswer, metered, NO_USAGE } from "../billing/layer.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { embeddings } from "../endpoints/embeddings/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { Channel } from "../upstream/channels.ts";
import { callEmbeddings } from "../upstream/embeddings.ts";
import { embeddingsDialect, mediaTransport } from "../upstream/media.ts";
import {
  answerOf,
  type EmbeddingBody,
  type EmbeddingInputs,
  UpstreamEmbeddingsSchema,
} from "../wire/embeddings.ts";
import { GatewayError } from "../wire/errors.ts";
import { admitInput } from "./admit.ts";
import { noMediaChannel } from "./channels.ts";
import { callMedia, type MediaAnswer } from "./media-call.ts";

/** A decoded, checked embeddings request. */
export interface EmbeddingRequest {
  principal: Principal;
  model: ModelInfo;
  /** The alias the client named for `model`, if it named one (`[aliases]`), kept in the record. */
  alias?: string | undefined;
  body: EmbeddingBody;
  inputs: EmbeddingInputs;
  /** The inputs' tokens as the gateway counts them (token ids: their number). */
  inputTokens: number;
}

/** Admits, routes, calls, answers and settles one embeddings request. */
export function runEmbeddings(
  ctx: RequestContext,
  gateway: Gateway,
  request: EmbeddingRequest,
): Promise<Response> {
  const admit = admitInput(ctx, {
    principal: request.principal,
    model: request.model,
    alias: request.alias,
    endpoint: embeddings.paths.embeddings,
    stream: false,
    endUser: request.body.user,
    worstCase: { kind: "text", inputTokens: request.inputTokens, maxOutputTokens: 0 },
  });
  return metered(
    gateway.meter,
    admit,
    ctx.trace,
    (tried) => answer(ctx, gateway, request, tried),
    undefined,
    ctx.request.signal,
  );
}

/** The channels that can embed this request, in the order the table gives; 400/503 when none. */
function channelsFor(gateway: Gateway, request: EmbeddingRequest): Channel[] {
  const serving = gateway.channels.forModel(request.model.id).filter((c) => mediaTransport(c, "embeddings"));
  if (serving.length === 0) {
    throw noMediaChannel(request.model.id, "embeddings");
  }
  if (request.inputs.kind === "text") return serving;
  const taking = serving.filter((c) => embeddingsDialect(c).token_input);
  if (taking.length === 0) {
    throw new GatewayError(
      "invalid_request",
      `The channels serving \`${request.model.id}\` take text only, not token-id arrays: send input as strings.`,
      { param: "input" },
    );
  }
  return taking;
}

/**
 * The body one channel gets: its model id, and base64 vectors whenever it sends them (a quarter of
 * the float text's size, read without parsing numbers; a float client gets them decoded), else
 * floats.
 */
function bodyFor(channel: Channel, request: EmbeddingRequest): Record<string, unknown> {
  const { body } = request;
  const base64 = embeddingsDialect(channel).base64;
  return {
    model: channel.upstreamModel(request.model.id),
    input: body.input,
    encoding_format: base64 ? "base64" : "float",
    ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
    ...(body.user === undefined ? {} : { user: body.user }),
  };
}

const decoder = new TextDecoder();

async function answer(
  ctx: RequestContext,
  gateway: Gateway,
  request: EmbeddingRequest,
  tried: string[],
): Promise<MeteredAnswer> {
  const channels = channelsFor(gateway, request);
  const bodies = new Map<Channel, Record<string, unknown>>();
  const first = channels[0];
  const size = first === undefined ? 0 : JSON.stringify(bodyFor(first, request)).length;
  const calledAt = performance.now();
  let won: MediaAnswer<Uint8Array>;
  try {
    won = await callMedia(gateway, {
      channels,
      send: (channel, tools) => {
        const body = bodies.get(channel) ?? bodyFor(channel, request);
        bodies.set(channel, body);
        return callEmbeddings(channel, { body, ...tools, simSeed: gateway.config.sim.seed });
      },
      tried,
      signal: ctx.request.signal,
      bodyBytes: size,
    });
  } finally {
    ctx.upstreamMs += performance.now() - calledAt;
  }
  const upstream = readAnswer(won.channel, won.body);
  const reported = upstream.usage?.prompt_tokens;
  const fromUpstream = reported !== undefined && Number.isFinite(reported) && reported > 0;
  const tokens = fromUpstream ? Math.ceil(reported) : request.inputTokens;
  const result = answerOf(
    upstream,
    request.inputs.items.length,
    request.model.id,
    request.body.encoding_format,
    tokens,
  );
  if (typeof result === "string") {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${won.channel.name}" answered a malformed embeddings list (${result}). Retry later.`,
    );
  }
  const { firstByteAt } = won.timing;
  return {
    response: Response.json(result),
    complete: {
      status: 200,
      usage: { ...NO_USAGE, inputTokens: tokens },
      source: fromUpstream ? "reported" : "estimated",
      ttfbMs: firstByteAt === undefined ? undefined : Math.round(firstByteAt - ctx.startedAt),
      detail: {
        inputs: request.inputs.items.length,
        counted_tokens: request.inputTokens,
        encoding_format: request.body.encoding_format,
        dimensions: request.body.dimensions ?? request.model.embedding?.dimensions ?? null,
      },
    },
  };
}

/** The upstream's answer parsed and checked (a 502 when it is not an embeddings list). */
function readAnswer(channel: Channel, bytes: Uint8Array) {
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel.name}" answered with malformed JSON. Retry later.`,
    );
  }
  const parsed = v.safeParse(UpstreamEmbeddingsSchema, json);
  if (!parsed.success) {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel.name}" answered something other than an embeddings list (${describeIssues(parsed.issues)}). Retry later.`,
    );
  }
  return parsed.output;
}

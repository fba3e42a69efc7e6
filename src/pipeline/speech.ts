// The speech run after decoding, inside the billing layer (src/billing/layer.ts) as the text
// path: admit (RPM, concurrency, the worst case: the input's characters, or its tokens and a
// bound on the audio tokens it can become), route to the channels serving speech (SSE-capable
// ones for `stream_format: "sse"`), call through the shared failover (media-call.ts), relay the
// audio bytes or SSE events as they arrive (nothing buffered), and settle exactly once when the
// stream ends, fails or the client leaves: the usage the SSE done event reports ("reported"),
// else the characters and tokens the gateway counted ("estimated").

import * as v from "valibot";
import type { Principal } from "../auth/keys.ts";
import { Handoff } from "../base/handoff.ts";
import type { Nanos } from "../base/types.ts";
import type { AudioUnits } from "../billing/contract.ts";
import { type Ending, type MeteredAnswer, metered, NO_AUDIO, NO_USAGE } from "../billing/layer.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { speech } from "../endpoints/speech/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { Channel } from "../upstream/channels.ts";
import type { GuardedBody } from "../upstream/guard.ts";
import { mediaTransport, speechSse } from "../upstream/media.ts";
import { callSpeech } from "../upstream/speech.ts";
import { GatewayError } from "../wire/errors.ts";
import { type SpeechBody, SpeechEventSchema } from "../wire/speech.ts";
import { admitInput } from "./admit.ts";
import { noMediaChannel } from "./channels.ts";
import { callMediaStream } from "./media-call.ts";
import { relayBody, sideEvents } from "./media-relay.ts";

/** Characters a second the reservation assumes at speed 1 (slow speech: the bound is generous). */
const SLOWEST_CHARACTERS_PER_SECOND = 5;
/** Characters a second a settlement without reported usage assumes at speed 1. */
const CHARACTERS_PER_SECOND = 15;
/** Audio tokens a second of speech: the bound, and the estimate when no usage is reported. */
const AUDIO_TOKENS_BOUND_PER_SECOND = 25;
const AUDIO_TOKENS_PER_SECOND = 20;

export interface SpeechRequest {
  principal: Principal;
  model: ModelInfo;
  /** The alias the client named for `model`, if it named one (`[aliases]`), kept in the record. */
  alias?: string | undefined;
  body: SpeechBody;
  /** The input's characters (code points). */
  characters: number;
  /** The input's and the instructions' tokens as the gateway counts them. */
  textTokens: number;
}

function tokenBilled(model: ModelInfo): boolean {
  return model.speech?.billing === "tokens";
}

/** Audio tokens for the input spoken at `charactersPerSecond` × speed, `tokensPerSecond` a second. */
function audioTokens(request: SpeechRequest, charactersPerSecond: number, tokensPerSecond: number): number {
  const seconds = request.characters / charactersPerSecond / request.body.speed;
  return Math.ceil(seconds * tokensPerSecond);
}

function worstUnits(request: SpeechRequest): AudioUnits {
  if (!tokenBilled(request.model)) return { ...NO_AUDIO, characters: request.characters };
  return {
    ...NO_AUDIO,
    textInputTokens: request.textTokens,
    audioOutputTokens: audioTokens(request, SLOWEST_CHARACTERS_PER_SECOND, AUDIO_TOKENS_BOUND_PER_SECOND),
  };
}

interface SpeechUsage {
  input_tokens: number;
  output_tokens: number;
}

function billedUnits(
  request: SpeechRequest,
  reported: SpeechUsage | undefined,
): { units: AudioUnits; source: "reported" | "estimated" } {
  if (!tokenBilled(request.model))
    return { units: { ...NO_AUDIO, characters: request.characters }, source: "estimated" };
  if (reported !== undefined) {
    return {
      units: {
        ...NO_AUDIO,
        textInputTokens: reported.input_tokens,
        audioOutputTokens: reported.output_tokens,
      },
      source: "reported",
    };
  }
  return {
    units: {
      ...NO_AUDIO,
      textInputTokens: request.textTokens,
      audioOutputTokens: audioTokens(request, CHARACTERS_PER_SECOND, AUDIO_TOKENS_PER_SECOND),
    },
    source: "estimated",
  };
}

/** Admits, routes, calls, relays and settles one speech request. */
export function runSpeech(ctx: RequestContext, gateway: Gateway, request: SpeechRequest): Promise<Response> {
  const admit = admitInput(ctx, {
    principal: request.principal,
    model: request.model,
    alias: request.alias,
    endpoint: speech.paths.speech,
    stream: true,
    endUser: undefined,
    worstCase: { kind: "audio", units: worstUnits(request) },
  });
  return metered(
    gateway.meter,
    admit,
    undefined,
    (tried) => answer(ctx, gateway, request, tried),
    undefined,
    ctx.request.signal,
  );
}

function channelsFor(gateway: Gateway, request: SpeechRequest): Channel[] {
  const serving = gateway.channels.forModel(request.model.id).filter((c) => mediaTransport(c, "speech"));
  if (serving.length === 0) {
    throw noMediaChannel(request.model.id, "speech");
  }
  if (request.body.stream_format !== "sse") return serving;
  const sse = serving.filter(speechSse);
  if (sse.length === 0) {
    throw new GatewayError(
      "invalid_request",
      `The channels serving \`${request.model.id}\` do not stream speech as SSE: use stream_format audio.`,
      { param: "stream_format" },
    );
  }
  return sse;
}

/** The body a channel gets: the reference's fields as given, its model id. */
function bodyFor(channel: Channel, request: SpeechRequest): Record<string, unknown> {
  const b = request.body;
  return {
    model: channel.upstreamModel(request.model.id),
    input: b.input,
    voice: b.voice,
    response_format: b.response_format,
    speed: b.speed,
    ...(b.instructions === undefined ? {} : { instructions: b.instructions }),
    ...(b.stream_format === "sse" ? { stream_format: "sse" } : {}),
  };
}

async function answer(
  ctx: RequestContext,
  gateway: Gateway,
  request: SpeechRequest,
  tried: string[],
): Promise<MeteredAnswer> {
  const sse = request.body.stream_format === "sse";
  const channels = channelsFor(gateway, request);
  const calledAt = performance.now();
  const won = await callMediaStream(gateway, {
    channels,
    send: (channel, tools) =>
      callSpeech(channel, {
        body: bodyFor(channel, request),
        sse,
        ...tools,
        simSeed: gateway.config.sim.seed,
      }),
    tried,
    signal: ctx.request.signal,
    bodyBytes: request.body.input.length * 3,
  }).finally(() => {
    ctx.upstreamMs += performance.now() - calledAt;
  });
  const { firstByteAt } = won.timing;
  const ttfbMs = firstByteAt === undefined ? undefined : Math.round(firstByteAt - ctx.startedAt);
  return relay(request, won.body, won.stop, won.contentType, sse, ttfbMs);
}

/**
 * The upstream's bytes relayed as they arrive (media-relay.ts), the SSE events read on the side for
 * the done event's usage; settled at the end, on a failure or when the client leaves.
 */
function relay(
  request: SpeechRequest,
  body: GuardedBody | undefined,
  stop: () => void,
  contentType: string,
  sse: boolean,
  ttfbMs: number | undefined,
): MeteredAnswer {
  const ended = new Handoff<Ending, Nanos>();
  let usage: SpeechUsage | undefined;
  let bytes = 0;
  const events = sse
    ? sideEvents((json) => {
        const event = v.safeParse(SpeechEventSchema, json);
        if (event.success && event.output.type === "speech.audio.done") usage = event.output.usage;
      })
    : undefined;
  const settle = () => {
    const { units, source } = billedUnits(request, usage);
    return ended.send({
      status: 200,
      usage: {
        ...NO_USAGE,
        inputTokens: units.textInputTokens,
        outputTokens: units.audioOutputTokens,
        ...(units.characters > 0 ? { characters: units.characters } : {}),
      },
      source,
      ttfbMs,
      detail: {
        characters: units.characters,
        text_input_tokens: units.textInputTokens,
        audio_output_tokens: units.audioOutputTokens,
        input_characters: request.characters,
        response_format: request.body.response_format,
        stream_format: request.body.stream_format,
        voice: typeof request.body.voice === "string" ? request.body.voice : request.body.voice.id,
        speed: request.body.speed,
        bytes,
      },
    });
  };
  const stream = relayBody(body, {
    chunk: (chunk) => {
      bytes += chunk.byteLength;
      events?.(chunk);
    },
    settle,
    stop,
    sse,
    what: "speech",
  });
  const headers = sse
    ? { "content-type": "text/event-stream", "cache-control": "no-cache" }
    : { "content-type": contentType };
  return { response: new Response(stream, { headers }), ended };
}

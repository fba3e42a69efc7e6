// The speech-to-text run after decoding (transcriptions and translations), inside the billing
// layer (src/billing/layer.ts) as the text path: admit (RPM, concurrency, the worst case: the
// file's duration for per-minute models; for token models its audio-token bound, the prompt's
// tokens and the model's output cap), route to the channels serving the endpoint, call through
// the shared failover (media-call.ts), relay the answer as the upstream sent it (any format) or
// its `transcript.text.*` stream as it arrives, and settle exactly once: the usage the upstream
// reports (tokens, or seconds) as "reported", else the gateway's own figures (the duration it read,
// the tokens it counted) as "estimated".

import * as v from "valibot";
import type { Principal } from "../auth/keys.ts";
import { Handoff } from "../base/handoff.ts";
import type { Nanos } from "../base/types.ts";
import type { AudioUnits } from "../billing/contract.ts";
import { type Ending, type MeteredAnswer, metered, NO_AUDIO, NO_USAGE } from "../billing/layer.ts";
import type { ModelInfo } from "../catalog/models.ts";
import { countTokens } from "../catalog/tokenizer.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { Channel } from "../upstream/channels.ts";
import type { GuardedBody } from "../upstream/guard.ts";
import { mediaTransport } from "../upstream/media.ts";
import { callTranscription } from "../upstream/transcriptions.ts";
import type { AudioFile } from "../wire/audio.ts";
import { GatewayError } from "../wire/errors.ts";
import {
  type AudioTask,
  TranscriptAnswerSchema,
  TranscriptEventSchema,
  type TranscriptionFields,
  type TranscriptUsage,
  usageOf,
} from "../wire/transcriptions.ts";
import { admitInput } from "./admit.ts";
import { noMediaChannel } from "./channels.ts";
import { callMedia, callMediaStream, type MediaCall } from "./media-call.ts";
import { relayBody, sideEvents } from "./media-relay.ts";

/**
 * Audio tokens a second the reservation allows for token-billed models (the simulator answers 10;
 * a settlement above the reservation is still charged in full, as for text).
 */
export const AUDIO_TOKEN_BOUND_PER_SECOND = 20;
/** Audio tokens a second the settlement counts when a token model's upstream reports no usage. */
export const AUDIO_TOKENS_ESTIMATE_PER_SECOND = 10;

export interface TranscriptionRequest {
  principal: Principal;
  model: ModelInfo;
  /** The alias the client named for `model`, if it named one (`[aliases]`), kept in the record. */
  alias?: string | undefined;
  task: AudioTask;
  /** The client-facing path. */
  path: string;
  fields: TranscriptionFields;
  file: AudioFile;
}

/** Whole seconds of audio, in ms: per-minute billing counts what the reference reports, seconds. */
function billedMs(durationMs: number): number {
  return Math.ceil(durationMs / 1000) * 1000;
}

function tokenBilled(model: ModelInfo): boolean {
  return model.transcription?.billing === "tokens";
}

/** The most the request can use: what admission reserves. */
function worstUnits(request: TranscriptionRequest): AudioUnits {
  const { model, file, fields } = request;
  if (!tokenBilled(model)) {
    return { ...NO_AUDIO, audioMs: billedMs(file.durationMs) };
  }
  return {
    ...NO_AUDIO,
    audioInputTokens: Math.ceil((file.durationMs / 1000) * AUDIO_TOKEN_BOUND_PER_SECOND),
    textInputTokens: countTokens(fields.prompt ?? ""),
    outputTokens: model.transcription?.maxOutputTokens ?? 0,
  };
}

/**
 * The units to bill: the upstream's usage when it reported one in the model's unit, else the
 * gateway's figures (the duration it read; the tokens it counted).
 */
function billedUnits(
  request: TranscriptionRequest,
  reported: TranscriptUsage | undefined,
  transcript: string | undefined,
): { units: AudioUnits; source: "reported" | "estimated" } {
  const tokens = tokenBilled(request.model);
  if (reported?.type === "duration" && !tokens) {
    const units = { ...NO_AUDIO, audioMs: billedMs(reported.seconds * 1000) };
    return { units, source: "reported" };
  }
  if (reported?.type === "tokens" && tokens) {
    const text = reported.input_token_details?.text_tokens ?? 0;
    const audio = reported.input_token_details?.audio_tokens ?? Math.max(0, reported.input_tokens - text);
    return {
      units: {
        ...NO_AUDIO,
        audioInputTokens: audio,
        textInputTokens: text,
        outputTokens: reported.output_tokens,
      },
      source: "reported",
    };
  }
  return { units: estimated(request, transcript), source: "estimated" };
}

function estimated(request: TranscriptionRequest, transcript: string | undefined): AudioUnits {
  const { file, fields } = request;
  if (!tokenBilled(request.model)) {
    return { ...NO_AUDIO, audioMs: billedMs(file.durationMs) };
  }
  return {
    ...NO_AUDIO,
    audioInputTokens: Math.ceil((file.durationMs / 1000) * AUDIO_TOKENS_ESTIMATE_PER_SECOND),
    textInputTokens: countTokens(fields.prompt ?? ""),
    outputTokens: countTokens(transcript ?? ""),
  };
}

/** The settlement of `units`: tokens in the record's columns, every unit in its detail. */
function endingOf(
  request: TranscriptionRequest,
  status: number,
  billed: { units: AudioUnits; source: "reported" | "estimated" | "none" },
  ttfbMs: number | undefined,
): Ending {
  const { units } = billed;
  return {
    status,
    usage: {
      ...NO_USAGE,
      inputTokens: units.audioInputTokens + units.textInputTokens,
      outputTokens: units.outputTokens,
      ...(units.audioMs > 0 ? { audioMs: units.audioMs } : {}),
    },
    source: billed.source,
    ttfbMs,
    detail: {
      task: request.task,
      response_format: request.fields.responseFormat,
      audio_ms: units.audioMs,
      audio_input_tokens: units.audioInputTokens,
      text_input_tokens: units.textInputTokens,
      output_tokens: units.outputTokens,
      measured_ms: request.file.durationMs,
      container: request.file.container,
      file_bytes: request.file.bytes.byteLength,
    },
  };
}

/** Admits, routes, calls, relays and settles one transcription or translation. */
export function runTranscription(
  ctx: RequestContext,
  gateway: Gateway,
  request: TranscriptionRequest,
): Promise<Response> {
  const admit = admitInput(ctx, {
    principal: request.principal,
    model: request.model,
    alias: request.alias,
    endpoint: request.path,
    stream: request.fields.stream,
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

function channelsFor(gateway: Gateway, request: TranscriptionRequest): Channel[] {
  const endpoint = request.task === "translation" ? "translations" : "transcriptions";
  const channels = gateway.channels.forModel(request.model.id).filter((c) => mediaTransport(c, endpoint));
  if (channels.length === 0) {
    throw noMediaChannel(request.model.id, endpoint);
  }
  return channels;
}

/** The fields a channel gets, in the reference's names, its model id. */
function fieldsFor(channel: Channel, request: TranscriptionRequest): Record<string, string | string[]> {
  const f = request.fields;
  const out: Record<string, string | string[]> = {
    model: channel.upstreamModel(request.model.id),
    response_format: f.responseFormat,
  };
  if (f.prompt !== undefined) out.prompt = f.prompt;
  if (f.temperature !== undefined) out.temperature = String(f.temperature);
  if (request.task === "transcription") {
    if (f.language !== undefined) out.language = f.language;
    if (f.timestampGranularities.length > 0) out.timestamp_granularities = f.timestampGranularities;
    if (f.include.length > 0) out.include = f.include;
    if (f.chunkingStrategy !== undefined) out.chunking_strategy = f.chunkingStrategy;
    if (f.stream) out.stream = "true";
  }
  return out;
}

async function answer(
  ctx: RequestContext,
  gateway: Gateway,
  request: TranscriptionRequest,
  tried: string[],
): Promise<MeteredAnswer> {
  const media: MediaCall = {
    channels: channelsFor(gateway, request),
    send: (channel, tools) =>
      callTranscription(channel, {
        task: request.task,
        fields: fieldsFor(channel, request),
        file: request.file,
        stream: request.fields.stream,
        ...tools,
        simSeed: gateway.config.sim.seed,
      }),
    tried,
    signal: ctx.request.signal,
    bodyBytes: request.file.bytes.byteLength,
  };
  const calledAt = performance.now();
  if (request.fields.stream) {
    const won = await callMediaStream(gateway, media).finally(() => {
      ctx.upstreamMs += performance.now() - calledAt;
    });
    const ttfbMs =
      won.timing.firstByteAt === undefined ? undefined : Math.round(won.timing.firstByteAt - ctx.startedAt);
    return relayStream(request, won.body, won.stop, ttfbMs);
  }
  const won = await callMedia(gateway, media).finally(() => {
    ctx.upstreamMs += performance.now() - calledAt;
  });
  const ttfbMs =
    won.timing.firstByteAt === undefined ? undefined : Math.round(won.timing.firstByteAt - ctx.startedAt);
  const { usage, transcript } = readComplete(request, won.body);
  const ending = endingOf(request, 200, billedUnits(request, usage, transcript), ttfbMs);
  const response = new Response(won.body, { headers: { "content-type": won.contentType } });
  return { response, complete: ending };
}

const decoder = new TextDecoder();

/** A complete answer's usage and text: JSON formats carry both; the others are their text. */
function readComplete(
  request: TranscriptionRequest,
  bytes: Uint8Array,
): { usage: TranscriptUsage | undefined; transcript: string | undefined } {
  const text = decoder.decode(bytes);
  const format = request.fields.responseFormat;
  if (format === "json" || format === "verbose_json" || format === "diarized_json") {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new GatewayError(
        "upstream_failed",
        "The upstream answered malformed JSON for a JSON transcription. Retry later.",
      );
    }
    const parsed = v.safeParse(TranscriptAnswerSchema, json);
    if (!parsed.success) {
      throw new GatewayError(
        "upstream_failed",
        "The upstream's transcription answer has no text. Retry later.",
      );
    }
    return { usage: usageOf(parsed.output.usage), transcript: parsed.output.text };
  }
  return { usage: undefined, transcript: text };
}

/**
 * The upstream's `transcript.text.*` stream relayed as it arrives (media-relay.ts), its events read
 * on the side (the deltas' text, the done event's usage); settled when it ends, fails or the client
 * leaves.
 */
function relayStream(
  request: TranscriptionRequest,
  body: GuardedBody | undefined,
  stop: () => void,
  ttfbMs: number | undefined,
): MeteredAnswer {
  const ended = new Handoff<Ending, Nanos>();
  let transcript = "";
  let usage: TranscriptUsage | undefined;
  const events = sideEvents((json) => {
    const event = v.safeParse(TranscriptEventSchema, json);
    if (!event.success) return;
    if (event.output.type === "transcript.text.delta") transcript += event.output.delta;
    else {
      transcript = event.output.text;
      usage = usageOf(event.output.usage);
    }
  });
  const stream = relayBody(body, {
    chunk: events,
    settle: () => ended.send(endingOf(request, 200, billedUnits(request, usage, transcript), ttfbMs)),
    stop,
    sse: true,
    what: "transcription",
  });
  const headers = { "content-type": "text/event-stream", "cache-control": "no-cache" };
  return { response: new Response(stream, { headers }), ended };
}

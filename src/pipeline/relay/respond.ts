// Turns an upstream's 2xx answer into the client's response: JSON passed through (or translated
// when the channel spoke another protocol), or an SSE stream relayed event by event (translated
// event by event when needed); settles the request when the answer is complete.
import { NO_USAGE } from "../../billing/meter.ts";
import type { Gateway } from "../../gateway.ts";
import type { RequestContext } from "../../http/context.ts";
import { describeAnswer } from "../../telemetry/request.ts";
import { SSE_HEADERS } from "../../wire/sse.ts";
import type { TextProtocol, TextView } from "../../wire/text-form.ts";
import type { Answered } from "../call.ts";
import type { Settle } from "../settle.ts";
import { relayJson } from "./nonstream.ts";
import { relayStream } from "./stream.ts";
import { UsageTap } from "./tap.ts";
import { type Translation, translateJson, translateStream } from "./translated.ts";

export interface RespondInput {
  ctx: RequestContext;
  gateway: Gateway;
  view: TextView;
  /** The client's parsed request body. */
  request: Record<string, unknown>;
  inputTokens: number;
  answered: Answered;
  /** The protocol the answering channel spoke. */
  upstream: TextProtocol;
  tried: string[];
  settle: Settle;
}

export async function respond(input: RespondInput): Promise<Response> {
  const { ctx, view, answered, tried, settle } = input;
  const ttfb = () => Math.round(performance.now() - ctx.startedAt);
  const body = answered.body;
  const translation: Translation | undefined =
    input.upstream === view.protocol
      ? undefined
      : {
          from: input.upstream,
          to: view.protocol,
          model: view.model,
          inputEstimate: input.inputTokens,
          request: input.request,
        };
  if (answered.bytes !== undefined || body === undefined) {
    const answer = relayJson(
      answered.channel.config.name,
      input.upstream,
      answered.bytes ?? new Uint8Array(),
      view.model,
    );
    describeAnswer(ctx.trace, input.upstream, answer.json);
    // Translated before settling: an answer that cannot be read is a 502 settled as a failure.
    const bytes = translation
      ? translateJson(translation, answered.channel.config.name, answer.json)
      : answer.bytes;
    const usage = answer.usage ?? { ...NO_USAGE, inputTokens: input.inputTokens };
    await settle({
      status: 200,
      usage,
      source: answer.usage ? "reported" : "estimated",
      channels: tried,
      ttfbMs: ttfb(),
    });
    return new Response(bytes, { status: 200, headers: { "content-type": "application/json" } });
  }
  // Translated: usage comes from the upstream's own events, the rest from what the client gets.
  const translated = translation ? translateStream(translation, body.stream()) : undefined;
  const tap = new UsageTap(view.protocol, translated?.usage);
  let ttfbMs: number | undefined;
  const stream = relayStream({
    // Native: the relay reads the guarded upstream body itself, one read loop and no stream between.
    body: translated?.body ?? body,
    tap,
    abort: answered.abort,
    keepaliveMs: input.gateway.config.text.keepalive_seconds * 1000,
    dropUsageChunk: view.protocol === "chat" && !view.includeUsage,
    // A translated stream is written with the client's id already.
    clientModel:
      translated === undefined && answered.channel.upstreamModel(view.model) !== view.model
        ? view.model
        : undefined,
    onFirstByte: () => {
      ttfbMs = ttfb();
    },
    onEnd: async (_outcome) => {
      if (ctx.trace !== undefined) ctx.trace.set("gen_ai.response.finish_reasons", tap.finishReasons());
      const { usage, source } = tap.usage(input.inputTokens);
      await settle({ status: 200, usage, source, channels: tried, ttfbMs });
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}

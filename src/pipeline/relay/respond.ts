// Turns an upstream's 2xx answer into the client's response: JSON passed through (or translated
// when the channel spoke another protocol), or an SSE stream relayed event by event (translated
// event by event when needed). It calls no billing: it reports the answer's settlement to the
// billing layer around it (src/billing/layer.ts) — a complete answer with its response, a
// stream when the relay ends it (and the stream closes once the layer recorded it).
import { Handoff } from "../../base/handoff.ts";
import type { Nanos } from "../../base/types.ts";
import type { Ending, MeteredAnswer } from "../../billing/layer.ts";
import type { ModelInfo } from "../../catalog/models.ts";
import type { Gateway } from "../../gateway.ts";
import type { RequestContext } from "../../http/context.ts";
import { readReply } from "../../protocols/translate.ts";
import { describeAnswer } from "../../telemetry/request.ts";
import { costComment } from "../../wire/cost.ts";
import { SSE_HEADERS } from "../../wire/sse.ts";
import type { TextProtocol, TextView } from "../../wire/text-form.ts";
import { asObject } from "../../wire/translate/convert.ts";
import type { Answered } from "../call.ts";
import { CollectingTap, endOf, type Keep, storable } from "./keep.ts";
import { relayJson } from "./nonstream.ts";
import { relayStream } from "./stream.ts";
import { countedOutput, estimatedUsage, type StreamTap, UsageTap } from "./tap.ts";
import { type Translation, translateJson, translateReader } from "./translated.ts";

export interface RespondInput {
  ctx: RequestContext;
  gateway: Gateway;
  view: TextView;
  /** The client's parsed request body. */
  request: Record<string, unknown>;
  /** The catalog model served (the target when the client named an alias). */
  model: ModelInfo;
  inputTokens: number;
  /** The output tokens the reservation covers: a count of what a cut stream delivered never goes above. */
  outputCap: number;
  /** The answer, its usage reading bound by the call stage. */
  answered: Answered;
  /** Hands a whole answer to the response cache, once settled (absent: the cache is off for it). */
  keep?: Keep | undefined;
}

export function respond(input: RespondInput): MeteredAnswer {
  const { ctx, view, answered } = input;
  const ttfb = () => Math.round(performance.now() - ctx.startedAt);
  const translation: Translation | undefined =
    answered.protocol === view.protocol
      ? undefined
      : {
          from: answered.protocol,
          to: view.protocol,
          model: view.model,
          inputEstimate: input.inputTokens,
          request: input.request,
          includeUsage: view.includeUsage,
        };
  const { answer } = answered;
  if (answer.complete) {
    describeAnswer(ctx.trace, answered.protocol, answer.json);
    // Translated before reporting: an answer that cannot be read is a 502 settled as a failure.
    const bytes = translation
      ? translateJson(translation, answered.channel.config.name, answer.json)
      : relayJson(answer.bytes, answer.json, view.model);
    // An answer without usage (some compatible servers send none) is billed its text, counted.
    const { usage } = answer;
    const counted = () =>
      estimatedUsage(
        input.inputTokens,
        countedOutput(answerText(answered.protocol, answer.json), input.outputCap),
      );
    const ending: Ending = {
      status: 200,
      usage: usage ?? counted(),
      source: usage ? "reported" : "counted",
      ttfbMs: ttfb(),
    };
    const response = new Response(bytes, { status: 200, headers: { "content-type": "application/json" } });
    const { keep } = input;
    if (keep === undefined || usage === undefined) return { response, complete: ending };
    const settled = (cost: Nanos) => {
      const text = new TextDecoder().decode(bytes);
      const json = asObject(translation ? JSON.parse(text) : answer.json);
      if (!json.ok || !storable(endOf(readReply(view.protocol, json.value)), ending.source)) return;
      keep({ protocol: view.protocol, answer: text, usage, costNanos: cost });
    };
    return { response, complete: ending, settled };
  }
  const { body, reader } = answer;
  // Translated: usage comes from the upstream's own events, the rest from what the writer wrote.
  const translated = translation ? translateReader(translation, body, reader) : undefined;
  const relayed: StreamTap = translated?.tap ?? new UsageTap(view.protocol, reader);
  const { keep } = input;
  const collector =
    keep === undefined ? undefined : new CollectingTap(relayed, view.model, input.inputTokens, input.request);
  const tap: StreamTap = collector ?? relayed;
  const ended = new Handoff<Ending, Nanos>();
  let ttfbMs: number | undefined;
  const stream = relayStream({
    // The relay reads the guarded upstream body itself (or the translator reading it): one read
    // loop and no stream between.
    body: translated?.body ?? body,
    tap,
    abort: answered.abort,
    keepaliveMs: input.gateway.config.text.keepalive_seconds * 1000,
    // Only Chat clients may not ask for the usage chunk (the other heads always include usage).
    dropUsageChunk: !view.includeUsage,
    // A translated stream is written with the client's id already.
    clientModel:
      translated === undefined && answered.channel.upstreamModel(input.model.id) !== view.model
        ? view.model
        : undefined,
    onFirstByte: () => {
      ttfbMs = ttfb();
    },
    onEnd: async (outcome) => {
      if (ctx.trace !== undefined) ctx.trace.set("gen_ai.response.finish_reasons", tap.finishReasons());
      const { usage, source } = tap.usage(input.inputTokens, input.outputCap);
      const cost = await ended.send({ status: 200, usage, source, ttfbMs });
      const whole = outcome === "complete" ? collector?.answer() : undefined;
      if (keep !== undefined && whole !== undefined && storable(whole.end, source)) {
        keep({ protocol: view.protocol, answer: whole.json, usage, costNanos: cost });
      }
      // The stream's last line: its settled cost, as an SSE comment every client skips.
      return costComment(cost);
    },
  });
  return { response: new Response(stream, { status: 200, headers: SSE_HEADERS }), ended };
}

/** What a complete answer generated: its text, refusals, thinking, and tool calls' names and arguments. */
function answerText(protocol: TextProtocol, json: unknown): string {
  const answer = asObject(json);
  if (!answer.ok) return "";
  let text = "";
  for (const part of readReply(protocol, answer.value).parts) {
    if (part.type === "text" || part.type === "refusal" || part.type === "thinking") text += part.text;
    else if (part.type === "tool_call") text += part.name + part.arguments;
  }
  return text;
}

// Turns an upstream's 2xx answer into the client's response: JSON passed through, or an SSE
// stream relayed event by event; settles the request when the answer is complete.
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { SSE_HEADERS } from "../wire/sse.ts";
import type { TextView } from "../wire/text-view.ts";
import { relayJson } from "./nonstream.ts";
import type { Answered } from "./route.ts";
import { relayStream } from "./stream.ts";
import { UsageTap } from "./tap.ts";
import type { Settle } from "./text.ts";

export interface RespondInput {
  ctx: RequestContext;
  gateway: Gateway;
  view: TextView;
  inputTokens: number;
  answered: Answered;
  abort: AbortController;
  tried: string[];
  settle: Settle;
}

export async function respond(input: RespondInput): Promise<Response> {
  const { ctx, view, answered, tried, settle } = input;
  const ttfb = () => Math.round(performance.now() - ctx.startedAt);
  const body = answered.response.body;
  if (!view.stream || body === null) {
    const answer = await relayJson(answered.channel.config.name, view.protocol, answered.response);
    const usage = answer.usage ?? {
      inputTokens: input.inputTokens,
      cachedInputTokens: 0,
      outputTokens: 0,
      reasoningTokens: 0,
      generations: 0,
    };
    await settle({
      status: 200,
      usage,
      source: answer.usage ? "reported" : "estimated",
      channels: tried,
      ttfbMs: ttfb(),
    });
    return new Response(answer.bytes, { status: 200, headers: { "content-type": "application/json" } });
  }
  const tap = new UsageTap(view.protocol);
  let ttfbMs: number | undefined;
  const stream = relayStream({
    body,
    tap,
    abort: input.abort,
    keepaliveMs: input.gateway.config.text.keepalive_seconds * 1000,
    dropUsageChunk: view.protocol === "chat" && !view.includeUsage,
    onFirstByte: () => {
      ttfbMs = ttfb();
    },
    onEnd: async (outcome) => {
      const { usage, source } = tap.usage(input.inputTokens);
      await settle({ status: 200, usage, source, channels: tried, ttfbMs });
    },
  });
  return new Response(stream, { status: 200, headers: SSE_HEADERS });
}

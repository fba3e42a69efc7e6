// A text request answered from the response cache (src/cache/): inside the billing layer like any
// request (limits, a reservation of the hit's known cost, one usage record marked as a hit, the
// rate-limit and cost headers), no route and no upstream call. The stored answer is the complete
// non-stream body in the client's protocol; a stream is replayed from it event by event through
// the protocol's writer, ending with its cost comment like a relayed stream. The answer names the
// model the client asked for.
import { Handoff } from "../base/handoff.ts";
import type { Nanos } from "../base/types.ts";
import type { AdmitInput } from "../billing/contract.ts";
import { type Ending, type MeteredAnswer, metered } from "../billing/layer.ts";
import type { CachedAnswer, CachePlan } from "../cache/cache.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { readReply, replyWriter } from "../protocols/translate.ts";
import { costComment } from "../wire/cost.ts";
import { SSE_HEADERS } from "../wire/sse.ts";
import type { TextView } from "../wire/text-form.ts";
import { replyEvents } from "../wire/translate/convert.ts";
import type { Obj } from "../wire/translate/narrow.ts";
import { relayJson } from "./relay/nonstream.ts";

const encoder = new TextEncoder();

export function serveCached(
  ctx: RequestContext,
  gateway: Gateway,
  admit: AdmitInput,
  plan: CachePlan,
  hit: CachedAnswer,
  view: TextView,
  request: Obj,
): Promise<Response> {
  const input: AdmitInput = {
    ...admit,
    fixedCost: gateway.cache.hitCost(plan, hit.costNanos),
    cacheHit: true,
  };
  const ending = (): Ending => ({
    status: 200,
    usage: hit.usage,
    source: "reported",
    ttfbMs: Math.round(performance.now() - ctx.startedAt),
  });
  const answer = async (): Promise<MeteredAnswer> => {
    const json = JSON.parse(hit.answer) as Obj;
    if (!view.stream) {
      const bytes = relayJson(encoder.encode(hit.answer), json, view.model);
      const response = new Response(bytes, { status: 200, headers: { "content-type": "application/json" } });
      return { response, complete: ending() };
    }
    const writer = replyWriter(view.protocol, view.model, hit.usage.inputTokens, request, view.includeUsage);
    const events = replyEvents(readReply(view.protocol, json));
    const ended = new Handoff<Ending, Nanos>();
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const event of events) for (const bytes of writer.push(event)) controller.enqueue(bytes);
        const cost = await ended.send(ending());
        controller.enqueue(costComment(cost));
        controller.close();
      },
    });
    return { response: new Response(body, { status: 200, headers: SSE_HEADERS }), ended };
  };
  // The client's signal, as for an answer from upstream: a hit whose client has left (a pipelined
  // request Bun will not answer) is not billed, whatever the hit fraction.
  return metered(gateway.meter, input, ctx.trace, answer, undefined, ctx.request.signal);
}

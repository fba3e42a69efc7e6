// Span attributes from the gateway's own facts, named per the OpenTelemetry GenAI semantic
// conventions (`gen_ai.*`) where one exists, under `modelgate.*` otherwise. Never a secret: keys
// appear by name, and the prompt text only when `telemetry.capture_content` is on (completion
// text never).
import { isObject } from "../base/plain-object.ts";
import type { UsageEvent } from "../billing/feed.ts";
import { protocolOf, type TextProtocol } from "../protocols/index.ts";
import type { TextView } from "../wire/text-form.ts";
import type { UsageCounts } from "../wire/usage-counts.ts";
import type { AttrValue, SpanHandle } from "./span.ts";

type Attrs = Record<string, AttrValue>;

/** What the client asked for: operation, model, output cap, streaming; the prompt only if captured. */
export function requestAttributes(view: TextView, captureContent: boolean): Attrs {
  const attrs: Attrs = {
    "gen_ai.operation.name": "chat",
    "gen_ai.request.model": view.model,
    "modelgate.protocol": view.protocol,
    "modelgate.stream": view.stream,
  };
  if (view.maxOutputTokens !== undefined) attrs["gen_ai.request.max_tokens"] = view.maxOutputTokens;
  if (captureContent) {
    attrs["gen_ai.input.messages"] = JSON.stringify([
      { role: "user", parts: [{ type: "text", content: view.promptText }] },
    ]);
  }
  return attrs;
}

/** Token counts of a settlement (cache reads and writes apart). */
export function usageAttributes(usage: UsageCounts): Attrs {
  return {
    "gen_ai.usage.input_tokens": usage.inputTokens,
    "gen_ai.usage.output_tokens": usage.outputTokens,
    "gen_ai.usage.cache_read.input_tokens": usage.cachedInputTokens,
    "gen_ai.usage.cache_creation.input_tokens": usage.cacheWriteTokens + usage.cacheWrite1hTokens,
    "modelgate.usage.reasoning_tokens": usage.reasoningTokens,
  };
}

/** What billing decided, from the usage feed: cost and where the usage figures came from. */
export function settledAttributes(event: UsageEvent): Attrs {
  return {
    "modelgate.cost_usd": event.costNanos / 1e9,
    "modelgate.cost_nanos": event.costNanos,
    "modelgate.usage.source": event.usageSource,
  };
}

/** Sets every attribute of `attrs` on `span`. */
export function setAll(span: SpanHandle, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) span.set(name, value);
}

/** `gen_ai.response.finish_reasons` of a complete answer in `protocol`, as its record reads them. */
export function finishReasons(protocol: TextProtocol, json: unknown): string[] {
  return isObject(json) ? protocolOf(protocol).finishReasons(json) : [];
}

/** The response's own model id (`gen_ai.response.model`), when the answer names one. */
export function responseModel(json: unknown): string | undefined {
  return isObject(json) && typeof json.model === "string" ? json.model : undefined;
}

// What a same-protocol upstream receives of the client's body. The rule: every field the client
// sent is forwarded as sent (unknown fields included, so new upstream features keep working), with
// the model id mapped and the gateway's own overrides; the gateway validates the fields it meters
// (model, output limits, sampling ranges, Chat `n`) before that. The exceptions are the fields each
// protocol's record lists (`forwarding.rules`, src/protocols/<name>/index.ts), which would make the
// upstream bill at rates the gateway's price table does not have, or do work the gateway cannot
// relay or bill: those are refused with 400 naming the field, never silently dropped. A channel
// speaking another protocol receives only what the translation carries.
//
// Hosted (server-side) tools in `tools` fall in three classes (the record's
// `forwarding.classifyTool`). Priced per call (web search, file search, web fetch, and the
// Responses image generation tool, each call priced as the images it makes from the image price
// table; the Responses code interpreter, per container by its memory): forwarded, their calls
// counted from the answer (src/protocols/<name>/usage.ts) and billed at `[billing.tools]` prices,
// with a reservation returned for admission. Unpriced (Anthropic code execution, billed by
// container hours): no answer reports what it costs, so it is refused with 400 naming the tool
// unless the operator sets `[billing.tools] allow_unpriced = true` (then forwarded unbilled,
// logged at warn once per tool type). Everything else (function, custom, mcp, computer use, shell,
// apply_patch, tool search, Anthropic bash / text_editor / memory, and types this gateway does not
// know) is billed in tokens only and passes as before. Like the field rules, this holds whichever
// channel serves the request; translation toward another protocol still drops hosted tools (not
// billed).

import { log } from "../base/log.ts";
import type { ImageToolFacts, ToolReserve } from "../billing/contract.ts";
import { findModel } from "../catalog/models.ts";
import type { ToolsConfig } from "../config/prices.ts";
import { protocolOf, type TextProtocol } from "../protocols/index.ts";
import { GatewayError } from "../wire/errors.ts";

/** Hosted tool types forwarded unbilled under allow_unpriced, each warned about once. */
const warnedUnpriced = new Set<string>();

/** An Anthropic tool's `max_uses`: a whole number from 1, or absent. */
function maxUses(tool: Record<string, unknown>, index: number): number | undefined {
  const value = tool.max_uses;
  if (value === undefined || value === null) return undefined;
  const param = `tools[${index}].max_uses`;
  if (typeof value !== "number")
    throw new GatewayError("invalid_request", `${param} must be a whole number.`, { param });
  if (!Number.isInteger(value) || value < 1)
    throw new GatewayError("invalid_value", `${param} is ${value}; it must be a whole number from 1.`, {
      param,
    });
  return value;
}

/** What one call of an image generation tool makes, from its definition (unset values: `auto`). */
function imageFacts(tool: Record<string, unknown>): ImageToolFacts {
  const text = (value: unknown) => (typeof value === "string" ? value : "auto");
  const model = typeof tool.model === "string" ? findModel(tool.model) : undefined;
  const partials = tool.partial_images;
  return {
    model: model?.family === "image" ? model.id : undefined,
    quality: text(tool.quality),
    size: text(tool.size),
    partialImages: typeof partials === "number" && partials > 0 ? Math.min(Math.ceil(partials), 3) : 0,
  };
}

/** A code interpreter container's memory in GB: its `memory_limit` (`1g`, `4g`, `16g`, `64g`), else 1. */
function containerGb(tool: Record<string, unknown>): number {
  const container = tool.container;
  const limit =
    typeof container === "object" && container !== null
      ? (container as { memory_limit?: unknown }).memory_limit
      : undefined;
  const gb = typeof limit === "string" ? /^(\d+)g$/i.exec(limit)?.[1] : undefined;
  return gb === undefined ? 1 : Math.max(1, Number(gb));
}

/** The request's hosted tools: unpriced ones refused (or let through), priced ones to reserve for. */
function hostedTools(
  protocol: TextProtocol,
  body: Record<string, unknown>,
  config: ToolsConfig,
): ToolReserve | undefined {
  const tools = body.tools;
  if (!Array.isArray(tools)) return undefined;
  const priced: ToolReserve["tools"] = [];
  tools.forEach((raw, index) => {
    const tool = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
    const type = typeof tool.type === "string" ? tool.type : "";
    const kind = protocolOf(protocol).forwarding.classifyTool(type);
    if (kind === undefined) return;
    if (kind === "image_generation") {
      priced.push({ tool: kind, maxUses: undefined, image: imageFacts(tool) });
      return;
    }
    if (kind === "code_interpreter") {
      // One container per tool definition; a `memory_limit` of 4g costs four 1 GB containers.
      priced.push({ tool: kind, maxUses: 1, containerGb: containerGb(tool) });
      return;
    }
    if (typeof kind === "string") {
      priced.push({ tool: kind, maxUses: maxUses(tool, index) });
      return;
    }
    if (!config.allow_unpriced) {
      throw new GatewayError(
        "invalid_request",
        `tools[${index}]: the hosted tool "${type}" is billed by the upstream by ${kind.unpriced}, which this gateway cannot count or price; remove it from tools, or the operator sets [billing.tools] allow_unpriced = true to forward it unbilled.`,
        { param: `tools[${index}]` },
      );
    }
    if (!warnedUnpriced.has(type)) {
      warnedUnpriced.add(type);
      log("warn", "hosted tool forwarded unbilled ([billing.tools] allow_unpriced)", { tool: type });
    }
  });
  if (priced.length === 0) return undefined;
  const limit = body.max_tool_calls;
  return { tools: priced, maxToolCalls: typeof limit === "number" ? limit : undefined };
}

/**
 * Refuses (400 naming the field) a body field the gateway does not forward, and an unpriced hosted
 * tool; returns the priced hosted tools admission reserves for. See the rules above.
 */
export function checkForwardable(
  protocol: TextProtocol,
  body: Record<string, unknown>,
  tools: ToolsConfig,
): ToolReserve | undefined {
  for (const rule of protocolOf(protocol).forwarding.rules) {
    const value = body[rule.field];
    if (value === undefined) continue;
    const reason = rule.refuse(value);
    if (reason) throw new GatewayError("invalid_request", reason, { param: rule.field });
  }
  return hostedTools(protocol, body, tools);
}

// The input tokens a text request can be billed for: an upper bound per input kind, which the
// reservation prices (docs/billing.md, "What the reservation covers"). The prompt's text is
// counted once by the caller (TextView.promptText, o200k_base); this module adds what that text
// leaves out, walking the body in the protocol the upstream receives:
// - images, by the billing upstream's published formula (./image-tokens.ts), at the maximum when
//   the size is not in the request;
// - the framing of every message or input item, names, and the reply's priming;
// - tool definitions (their text is in the prompt count): a per-tool overhead and framing per
//   property and enum value of the schema; a typed tool (hosted, or an
//   Anthropic built-in such as bash or computer use) at a fixed allowance covering the largest
//   published definition; Anthropic's tool-use system prompt when tools are defined;
// - structured-output schemas, encrypted reasoning sent back, and any part or item type this
//   module does not know, as the text of their JSON.
// What has no bound of its own but is read in one model call — files and documents other than
// plain text, items stored by the upstream (`previous_response_id`, `conversation`, `prompt`,
// `item_reference`), an image with `detail: "original"` whose size the request does not show —
// is bounded by the model's context window: one call never bills more input than the model
// reads. Refused before the call with 400 naming the field: audio parts (billed at audio rates
// the gateway does not price) and MCP servers (their tool lists are read and their results fed
// back over several model calls, so not even the context window bounds them).
// A channel that speaks another protocol is bounded on the translated body, with that protocol's
// formulas; the reservation takes the largest bound over the channels that serve the model. The
// translated body carries the client's text (each fragment tokenized alike, joined by one
// separator token as in the prompt count), so its text is not counted again: only what the
// translation writes besides (an output format's instruction and schema, default tool schemas)
// is added, at most TRANSLATION_TEXT tokens plus the schema's text and 8 tokens per tool.
import type { ModelInfo } from "../catalog/models.ts";
import { countTokens } from "../catalog/tokenizer.ts";
import type { Gateway } from "../gateway.ts";
import type { BodyTally } from "../protocols/adapter.ts";
import { protocolOf, type TextProtocol } from "../protocols/index.ts";
import { GatewayError } from "../wire/errors.ts";
import type { IrRequest } from "../wire/text-form.ts";
import { arr, type Obj, obj, str } from "../wire/translate/narrow.ts";
import { upstreamProtocol } from "./channels.ts";
import {
  anthropicImageTokens,
  base64ImageSize,
  openaiImageTokens,
  urlImageSize,
  type VisionFormula,
} from "./image-tokens.ts";

/**
 * Token overheads beyond the text. OpenAI's cookbook counts 3 tokens per chat message, 1 per name
 * and 3 for the reply's priming; a function definition's wrapper 12 tokens beyond its text, and 3
 * for each property and enum value of its schema; Anthropic publishes
 * its tool-use system prompt (346 tokens with tool_choice auto or none, 313 otherwise) and the
 * definitions of its built-in tools (computer use up to 1,234 tokens with its system prompt, text
 * editor 700, bash 245). Each is rounded up here.
 */
export const OVERHEAD = {
  perMessage: 4,
  perName: 1,
  reply: 3,
  perTool: 12,
  perSchemaNode: 3,
  typedTool: 1300,
  anthropicToolPrompt: 346,
} as const;

/** The instruction a translation may write for an output format (the longest is ~20 tokens). */
const TRANSLATION_TEXT = 32;
/** A default tool schema a translation writes (`{"type":"object","properties":{}}`). */
const DEFAULT_SCHEMA = 8;

/** The framing tokens the protocols' walks add (src/protocols/<name>/bound.ts). */
const FRAMES = {
  message: OVERHEAD.perMessage,
  name: OVERHEAD.perName,
  toolPrompt: OVERHEAD.anthropicToolPrompt,
} as const;

function refuse(param: string, why: string): GatewayError {
  return new GatewayError("invalid_request", `${param}: ${why}`, { param });
}

/** One walk over a body: fixed tokens, and text to count once at the end. */
class Tally implements BodyTally {
  fixed = 0;
  readonly texts: string[] = [];

  constructor(
    readonly formula: VisionFormula,
    readonly model: string,
  ) {}

  /** The first field whose tokens have no bound but the model's context window, if any. */
  unbounded: string | undefined;

  /** Text outside the prompt count (names, schemas, unknown parts). */
  extra(text: string | undefined): void {
    if (text !== undefined && text !== "") this.texts.push(text);
  }

  json(value: unknown): void {
    if (value !== undefined && value !== null) this.extra(JSON.stringify(value));
  }

  image(param: string, url: string | undefined, detail: string | undefined): void {
    const size = url === undefined ? undefined : urlImageSize(url);
    this.imageOfSize(param, size, detail);
  }

  imageOfSize(param: string, size: ReturnType<typeof urlImageSize>, detail: string | undefined): void {
    if (this.formula === "anthropic") {
      this.fixed += anthropicImageTokens(this.model, size);
      return;
    }
    const tokens = openaiImageTokens(detail, size);
    if (tokens === undefined) this.unbound(`${param}.detail`);
    else this.fixed += tokens;
  }

  frame(what: "message" | "name" | "toolPrompt"): void {
    this.fixed += FRAMES[what];
  }

  content(param: string, value: unknown): void {
    content(this, param, value);
  }

  functionTool(schema: unknown): void {
    functionTool(this, schema);
  }

  typedTool(param: string, tool: Obj): void {
    typedTool(this, param, tool);
  }

  refuse(param: string, why: string): GatewayError {
    return refuse(param, why);
  }

  /** `param` has no bound of its own: the request is bounded by the context window. */
  unbound(param: string): void {
    this.unbounded ??= param;
  }

  /** The bound; infinite when some field has none but the context window. */
  total(): number {
    if (this.unbounded !== undefined) return Number.POSITIVE_INFINITY;
    return this.fixed + (this.texts.length === 0 ? 0 : countTokens(this.texts.join("\n")));
  }
}

/** A document block (Messages): plain text and content blocks by their text, others by the context. */
function documentPart(tally: Tally, param: string, part: Obj): void {
  const source = obj(part.source);
  if (source.type === "text") tally.extra(str(source.data));
  else if (source.type === "content") {
    if (typeof source.content === "string") tally.extra(source.content);
    else parts(tally, `${param}.source.content`, source.content);
  } else tally.unbound(param);
  tally.extra(str(part.title));
  tally.extra(str(part.context));
}

/** One content part of any of the three protocols. */
function part(tally: Tally, param: string, raw: unknown): void {
  const p = obj(raw);
  switch (p.type) {
    case "text":
    case "input_text":
    case "output_text":
    case "refusal":
    case "thinking":
      return;
    case "redacted_thinking":
      tally.extra(str(p.data));
      return;
    case "image_url": {
      const image = obj(p.image_url);
      tally.image(param, str(image.url) ?? str(p.image_url), str(image.detail));
      return;
    }
    case "input_image":
      tally.image(param, str(p.image_url) ?? str(obj(p.image_url).url), str(p.detail));
      return;
    case "image": {
      const source = obj(p.source);
      const data = str(source.data);
      const size = source.type === "base64" && data !== undefined ? base64ImageSize(data) : undefined;
      tally.imageOfSize(param, size, undefined);
      return;
    }
    case "tool_use":
    case "server_tool_use":
      tally.extra(str(p.name));
      return;
    case "tool_result":
      if (typeof p.content !== "string") parts(tally, `${param}.content`, p.content);
      return;
    case "document":
      documentPart(tally, param, p);
      return;
    case "input_audio":
      throw refuse(
        param,
        "audio input is billed at audio rates this gateway does not price; send a transcript as text",
      );
    case "file":
    case "input_file":
      tally.unbound(param);
      return;
    default:
      // A part this module does not know (search results, tool results of server tools, …):
      // bounded by the text of its JSON.
      tally.json(p);
  }
}

function parts(tally: Tally, param: string, content: unknown): void {
  arr(content).forEach((p, j) => {
    part(tally, `${param}[${j}]`, p);
  });
}

function content(tally: Tally, param: string, value: unknown): void {
  if (typeof value !== "string") parts(tally, param, value);
}

/** Property keys and enum values in a schema: each gets framing of its own when rendered. */
function schemaNodes(schema: unknown, depth = 0): number {
  if (depth > 64 || typeof schema !== "object" || schema === null) return 0;
  let n = 0;
  if (Array.isArray(schema)) {
    for (const item of schema) if (typeof item === "object") n += schemaNodes(item, depth + 1);
    return n;
  }
  const record = schema as Obj;
  for (const key in record) {
    const value = record[key];
    if (typeof value !== "object" || value === null) continue;
    if (key === "enum" && Array.isArray(value)) n += value.length;
    else if (key === "properties") for (const _ in value) n++;
    n += schemaNodes(value, depth + 1);
  }
  return n;
}

/**
 * A function tool (OpenAI, nested or flat; Anthropic custom): its wrapper and schema framing; its
 * name, description and schema text are in the prompt count.
 */
function functionTool(tally: Tally, schema: unknown): void {
  tally.fixed += OVERHEAD.perTool + OVERHEAD.perSchemaNode * schemaNodes(schema);
}

/** A typed (hosted or built-in) tool: its configuration's text plus the allowance. */
function typedTool(tally: Tally, param: string, tool: Obj): void {
  if (tool.type === "mcp") {
    throw refuse(
      param,
      "an MCP server's tool definitions are read by the upstream and billed as input this gateway cannot count; define the tools as functions instead",
    );
  }
  tally.fixed += OVERHEAD.typedTool;
  tally.json(tool);
}

/**
 * The tokens `body` (in `protocol`) can be billed for beyond its prompt text, by `protocol`'s
 * formulas. Infinite when only the context window bounds it;
 * refuses (400 naming the field) what has no bound at all.
 */
export function boundOf(protocol: TextProtocol, body: Obj, model: string): number {
  const { bound } = protocolOf(protocol);
  const tally = new Tally(bound.formula, model);
  tally.fixed += OVERHEAD.reply;
  bound.walk(tally, body);
  return tally.total();
}

/** What the caller knows of the request: its protocol, its body as sent, its internal form. */
export interface BoundRequest {
  protocol: TextProtocol;
  model: ModelInfo;
  body: Obj;
  /** The prompt text's tokens, counted by the caller. */
  promptTokens: number;
  ir(): IrRequest;
}

/**
 * The input tokens admission reserves: the largest bound over the protocols the model's channels
 * are called in (the client's own, and each translation's written body), and the model's context
 * window when something in the request has no smaller bound.
 */
export function reservedInputTokens(gateway: Gateway, request: BoundRequest): number {
  const { protocol, model, body } = request;
  let most = request.promptTokens + boundOf(protocol, body, model.id);
  if (!Number.isFinite(most)) return model.contextTokens;
  const targets = new Set<TextProtocol>();
  for (const channel of gateway.channels.forModel(model.id)) {
    const target = upstreamProtocol(channel, protocol);
    if (target !== undefined && target !== protocol) targets.add(target);
  }
  if (targets.size === 0) return most;
  const ir = request.ir();
  const format = ir.format?.kind === "json_schema" ? countTokens(JSON.stringify(ir.format.schema)) : 0;
  for (const target of targets) {
    const written = protocolOf(target).translate.writeRequest(ir, model.id, model.maxOutputTokens);
    const added = TRANSLATION_TEXT + format + DEFAULT_SCHEMA * arr(written.tools).length;
    most = Math.max(most, request.promptTokens + added + boundOf(target, written, model.id));
  }
  return Number.isFinite(most) ? most : model.contextTokens;
}

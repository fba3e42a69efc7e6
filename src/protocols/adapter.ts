// What one text protocol is, as one record: everything the gateway does differently for OpenAI
// Chat Completions, OpenAI Responses or Anthropic Messages is a field here, filled in the
// protocol's folder (src/protocols/<name>/index.ts) and looked up by name in the registry
// (src/protocols/index.ts). A record missing a field does not compile, so a new protocol is one
// folder and one registry line, and tsc lists what it must decide. The stages around hold the
// rules common to every protocol and call the record for the rest; none switches on the protocol
// (test/unit/architecture.test.ts checks it).
import type { VisionFormula } from "../pipeline/image-tokens.ts";
import type { SimEvent } from "../sim/text/pace.ts";
import type { SimPlan } from "../sim/text/plan.ts";
import type { ErrorProtocol } from "../wire/errors.ts";
import type { IrReply, IrRequest, TextView } from "../wire/text-form.ts";
import type { ReplyReader, ReplyWriter } from "../wire/translate/convert.ts";
import type { Obj } from "../wire/translate/narrow.ts";
import type { ReplyToolCalls } from "../wire/translate/reply-check.ts";
import type { PricedTool, ToolCalls, UsageCounts } from "../wire/usage-counts.ts";
import type { StreamUsage } from "./usage-reader.ts";

export type { ToolCalls };

/** A decoded request: the neutral view plus what is needed to forward it unchanged. */
export interface DecodedText {
  view: TextView;
  /** The parsed body (unknown fields kept), for re-serializing when something must change. */
  body: Record<string, unknown>;
  /** How many answers the request asks for (Chat `n`); admission reserves output for each. */
  choices?: number;
  /** Extra fields to set on the forwarded body (e.g. Chat `stream_options.include_usage`). */
  overrides?: Record<string, unknown>;
  anthropicVersion?: string;
  anthropicBeta?: string;
  /** The request in the internal form, for a channel that speaks another protocol. */
  ir(): IrRequest;
}

/** A body field the gateway refuses to forward in some values (pipeline/forwarding.ts applies them). */
export interface FieldRule {
  field: string;
  /** Why a value is refused, or undefined when it may be forwarded. */
  refuse(value: unknown): string | undefined;
}

/** A hosted tool's class: priced per call, unpriced (what the upstream bills it by), or tokens only (undefined). */
export type ToolClass = PricedTool | { unpriced: string } | undefined;

/** What a relayed stream knows when it breaks: the events the client got, the Responses `created`. */
export interface BrokenStream {
  readonly events: number;
  readonly created: Record<string, unknown> | undefined;
}

/** A request the simulator decoded, and the answers it renders for a plan. */
export interface SimRendered {
  view: TextView;
  json(plan: SimPlan): unknown;
  events(plan: SimPlan): SimEvent[];
}

/**
 * The walk of a request body for the input it can be billed for beyond its prompt text
 * (pipeline/input-bound.ts holds the tally and its formulas).
 */
export interface BodyTally {
  /** Tokens of framing (a message, a name, a tool prompt), by what they frame. */
  frame(what: "message" | "name" | "toolPrompt"): void;
  /** Text outside the prompt count (names, schemas, unknown parts). */
  extra(text: string | undefined): void;
  /** The text of a value's JSON. */
  json(value: unknown): void;
  /** A message's content: a string (in the prompt count) or parts. */
  content(param: string, value: unknown): void;
  image(param: string, url: string | undefined, detail: string | undefined): void;
  /** A function tool's wrapper and schema framing. */
  functionTool(schema: unknown): void;
  /** A typed (hosted or built-in) tool; MCP is refused. */
  typedTool(param: string, tool: Obj): void;
  /** `param` has no bound of its own: the request is bounded by the context window. */
  unbound(param: string): void;
  /** A 400 naming `param`: the request cannot be bounded at all. */
  refuse(param: string, why: string): Error;
}

export interface TextAdapter<Name extends string = string> {
  /** The registry key. */
  readonly name: Name;
  /** The client endpoint's path, and the upstream's. */
  readonly path: string;
  /** `gen_ai.provider.name` of an upstream speaking it. */
  readonly provider: string;
  /** The shape of its error bodies (the simulator answers errors in it). */
  readonly errorShape: ErrorProtocol;
  /** The request field that caps output tokens. */
  readonly outputCapField: string;
  /** The request field that holds the conversation (a 413 for too long an input names it). */
  readonly inputField: string;
  /** The client's body (parsed JSON) and headers → its head, what is forwarded, the internal form on demand (400/422). */
  decode(json: unknown, headers: Headers): DecodedText;
  /** Conversions to and from the internal form (src/wire/translate/). */
  readonly translate: {
    writeRequest(ir: IrRequest, model: string, defaultMaxTokens: number): Obj;
    readReply(json: Obj): IrReply;
    reader(): ReplyReader;
    /**
     * A writer of answers in this protocol; `model` is the id the client asked for, `request` the
     * client's body, `usageChunk` whether a stream ends with a usage-only chunk (Chat).
     */
    writer(model: string, inputEstimate: number, request: Obj | undefined, usageChunk: boolean): ReplyWriter;
    /** The tool calls a complete answer must hold whole to be translated (reply-check.ts). */
    toolCalls: ReplyToolCalls;
    /** The stream's first event carries the answer as it stands, which a broken stream's last event repeats. */
    startCarriesAnswer: boolean;
  };
  /** Usage in its answers and events (the meter's convention, src/wire/text-usage.ts). */
  readonly usage: {
    stream(): StreamUsage;
    answer(json: Obj): UsageCounts | undefined;
  };
  /** The message inside an upstream's error body; undefined when the body is not one. */
  errorMessage(body: unknown): string | undefined;
  /** The bytes that end a stream whose upstream broke off with `message` (an error, never a made-up finish). */
  failureEvents(stream: BrokenStream, message: string): Uint8Array[];
  /** `gen_ai.response.finish_reasons` of a complete answer. */
  finishReasons(json: Obj): string[];
  /** What a same-protocol upstream may not receive (pipeline/forwarding.ts). */
  readonly forwarding: {
    rules: readonly FieldRule[];
    classifyTool(type: string): ToolClass;
  };
  /** The input a body can be billed for beyond its prompt text (pipeline/input-bound.ts). */
  readonly bound: {
    formula: VisionFormula;
    walk(tally: BodyTally, body: Obj): void;
  };
  /** The simulator's answers in this protocol (src/sim/text/routes.ts serves them). */
  readonly sim: {
    render(body: unknown, headers: Headers, now: number): SimRendered;
  };
}

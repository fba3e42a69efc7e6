// What the simulated model "decides" for a request: reasoning, then either tool calls or text
// (plain or schema-valid JSON), cut at the output cap, with real token counts. Deterministic:
// the same seed and request always give the same plan.
//
// Tool-call rule (documented for tests): with tools present and tool_choice not "none", and the
// conversation NOT ending in a tool result, the simulator calls
//   - the tool tool_choice names, if it names one;
//   - with tool_choice "required" (Messages: {type:"any"}): the first tool whose name appears in
//     the last user message, else the first tool;
//   - with "auto" (or none given): the first tool whose name appears in the last user message,
//     else no tool.
// One call per request; its arguments are JSON valid against the tool's schema, holding only the
// required properties (as real models leave optional knobs out; coding CLIs reject odd values there). After a tool
// result the simulator always answers with text that quotes the start of that result.
import { countTokens, tokenPieces } from "../../catalog/tokenizer.ts";
import type { TextView } from "../../wire/text-form.ts";
import { hashString, Rng } from "../random.ts";
import { simulateText } from "../text.ts";
import { type Directives, readDirectives } from "./directives.ts";
import { jsonForSchema } from "./json.ts";

/** Reasoning tokens by effort (OpenAI protocols) when no thinking budget is given. */
const EFFORT_TOKENS: Readonly<Record<string, number>> = {
  none: 0,
  minimal: 0,
  low: 24,
  medium: 64,
  high: 160,
  xhigh: 320,
  max: 480,
};
const DEFAULT_MAX_OUTPUT = 4096;

export interface ToolCallPlan {
  id: string;
  name: string;
  /** The arguments as a JSON string (possibly cut short by the output cap). */
  arguments: string;
  pieces: string[];
}

export interface SimPlan {
  id: string;
  inputTokens: number;
  reasoning: { pieces: string[]; text: string; signature: string } | undefined;
  toolCall: ToolCallPlan | undefined;
  /** Visible text pieces, one per output token (empty with a tool call). */
  text: string[];
  outputTokens: number;
  reasoningTokens: number;
  /** `length` when the output cap cut the answer. */
  stop: "end" | "length" | "tool";
  directives: Directives;
}

/** Exactly `count` tokens of deterministic prose. */
function prose(seed: number, key: string, count: number): string[] {
  const pieces: string[] = [];
  for (let round = 0; pieces.length < count; round++) {
    const next = simulateText({ seed, key: `${key}#${round}` }).pieces;
    if (pieces.length > 0) pieces.push(" ");
    pieces.push(...next);
  }
  return pieces.slice(0, count);
}

function chooseTool(view: TextView): TextView["tools"][number] | undefined {
  if (view.tools.length === 0 || view.toolChoice.mode === "none" || view.toolResult !== undefined)
    return undefined;
  const choice = view.toolChoice;
  if (choice.mode === "named") return view.tools.find((t) => t.name === choice.name);
  const mentioned = view.tools.find((t) =>
    new RegExp(`\\b${escapeRegExp(t.name)}\\b`).test(view.lastUserText),
  );
  if (mentioned) return mentioned;
  return choice.mode === "required" ? view.tools[0] : undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function reasoningTokens(view: TextView, rng: Rng): number {
  const r = view.reasoning;
  if (r === undefined) return 0;
  if (r.budgetTokens !== undefined) return Math.min(r.budgetTokens, 48 + rng.int(0, 48));
  return EFFORT_TOKENS[r.effort ?? "medium"] ?? 64;
}

function answerText(view: TextView, seed: number, key: string, rng: Rng): string {
  const format = view.outputFormat;
  if (format?.kind === "json_schema") return JSON.stringify(jsonForSchema(format.schema, rng));
  if (format?.kind === "json_object") return JSON.stringify({ answer: simulateText({ seed, key }).text });
  const text = simulateText({ seed, key }).text;
  if (view.toolResult === undefined) return text;
  return `The tool returned ${JSON.stringify(view.toolResult.slice(0, 60))}. ${text}`;
}

/** The output format as it enters the seed: kind and schema only, so names and strictness do not move answers. */
function formatKey(format: TextView["outputFormat"]): string {
  if (format === undefined) return "null";
  return JSON.stringify(
    format.kind === "json_schema" ? { kind: format.kind, schema: format.schema } : format,
  );
}

/**
 * Builds the plan for a request under the simulator's seed; `inputTokens` is the prompt's count when
 * the caller has it (a long prompt is counted off the event loop, src/catalog/token-thread.ts).
 */
export function planAnswer(
  view: TextView,
  seed: number,
  inputTokens = countTokens(view.promptText),
): SimPlan {
  const key = `${view.model}\u0000${view.promptText}\u0000${formatKey(view.outputFormat)}`;
  const rng = new Rng(hashString(key, seed));
  const id = rng.next().toString(16).slice(2, 14).padEnd(12, "0") + rng.next().toString(16).slice(2, 14);
  let budget = view.maxOutputTokens ?? DEFAULT_MAX_OUTPUT;
  const wanted = reasoningTokens(view, rng);
  const thought = wanted > 0 ? prose(seed, `${key}/think`, Math.min(wanted, budget)) : [];
  budget -= thought.length;
  const reasoning =
    thought.length === 0
      ? undefined
      : { pieces: thought, text: thought.join(""), signature: signatureOf(thought.join(""), seed) };
  const base = {
    id,
    inputTokens,
    reasoning,
    reasoningTokens: thought.length,
    directives: readDirectives(view.lastUserText),
  };
  const tool = chooseTool(view);
  if (tool !== undefined) {
    const schema = tool.parameters ?? { type: "object" };
    const args = JSON.stringify(jsonForSchema(schema, rng, { requiredOnly: true }));
    const pieces = tokenPieces(args).slice(0, Math.max(0, budget));
    const cut = pieces.length < countTokens(args);
    const toolCall = { id: `call_${id}`, name: tool.name, arguments: pieces.join(""), pieces };
    const outputTokens = thought.length + pieces.length;
    return { ...base, toolCall, text: [], outputTokens, stop: cut || budget <= 0 ? "length" : "tool" };
  }
  const all = budget > 0 ? tokenPieces(answerText(view, seed, key, rng)) : [];
  const text = all.slice(0, Math.max(0, budget));
  const stop = text.length < all.length || (budget <= 0 && wanted > 0) ? "length" : "end";
  return { ...base, toolCall: undefined, text, outputTokens: thought.length + text.length, stop };
}

/** A deterministic signature for a thinking block (base64 of a hash chain over the text). */
function signatureOf(text: string, seed: number): string {
  const bytes = new Uint8Array(48);
  let h = hashString(text, seed);
  for (let i = 0; i < bytes.length; i += 4) {
    h = hashString(String(h), seed + i);
    new DataView(bytes.buffer).setUint32(i, h);
  }
  return Buffer.from(bytes).toString("base64");
}

// Usage in the Chat Completions protocol (channel kind "openai-chat" and every OpenAI-compatible
// server; the simulator speaks it too): the complete answer's `usage`, and in a stream the chunk
// that carries a usage object (the usage-only chunk `stream_options.include_usage` asks for, or
// usage on the finish chunk, as some servers send it). JSON.parse runs only on chunks a key test
// that does not depend on whitespace picks out; text chunks are kept unparsed (what a stream cut
// before its usage chunk is billed for). Usage is final on the usage-only chunk, on a finish chunk,
// or when `[DONE]` follows it; before that (vLLM's running count on every chunk) it is a floor.
// Whether the stream finished is read from its last two chunks.
import { openaiUsage } from "../../wire/text-usage.ts";
import { readObject } from "../../wire/translate/convert.ts";
import { arr, type Obj, obj, str } from "../../wire/translate/narrow.ts";
import type { UsageCounts } from "../../wire/usage-counts.ts";
import { StreamUsage } from "../usage-reader.ts";

// A whitespace-free test for the common compact form first (native substring search, one
// character look), the whitespace-tolerant pattern only when that cannot decide. Inside JSON
// strings quotes are escaped, so model text can never look like one of these keys.
const USAGE_OBJECT = /"usage"\s*:\s*\{/;
/** OpenAI's `{"error": {…}}` and vLLM's `{"object": "error", …}`: anchored, so most chunks fail at once. */
const ERROR = /^\s*\{\s*"(?:error"\s*:|object"\s*:\s*"error")/;
const FINISHED = /"finish_reason"\s*:\s*"/;
const TEXT_VALUE = /"(?:content|arguments|refusal|reasoning_content|reasoning)"\s*:\s*"/;
const N = 110;

/** A usage object: not `"usage": null`, which OpenAI sends on every chunk when include_usage is on. */
function hasUsage(data: string): boolean {
  const at = data.indexOf('"usage"');
  return at !== -1 && data.charCodeAt(at + 8) !== N && USAGE_OBJECT.test(data);
}

/** A chunk carrying generated text or tool arguments: counted for the estimate. */
function isText(data: string): boolean {
  if (
    data.includes('"content":"') ||
    data.includes('"arguments":"') ||
    data.includes('"reasoning_content":"')
  )
    return true;
  return data.includes('": ') && TEXT_VALUE.test(data);
}

/** The usage of a complete Chat answer. */
export function chatAnswerUsage(body: Obj): UsageCounts | undefined {
  return openaiUsage(body.usage);
}

export class ChatStreamUsage extends StreamUsage {
  /** The last two chunks' data (a finish chunk may be followed by the usage chunk). */
  #last: string | undefined;
  #beforeLast: string | undefined;

  /** True for the usage-only chunk (empty `choices` + `usage`), which the relay may drop. */
  override onEvent(_name: string | undefined, data: string): boolean {
    if (data.length < 16 && data.trim() === "[DONE]") {
      this.terminal = true;
      // The last usage before `[DONE]` is the upstream's last word, wherever it came.
      if (this.reported !== undefined) this.finalUsage();
      return false;
    }
    this.#beforeLast = this.#last;
    this.#last = data;
    if (isText(data)) this.keep(data);
    const usage = hasUsage(data);
    if (!usage && !ERROR.test(data)) return false;
    const chunk = readObject(data);
    if (!chunk.ok) return false;
    const choices = chunk.value.choices;
    if (!Array.isArray(choices)) {
      if (chunk.value.error !== undefined || chunk.value.object === "error") this.terminal = true;
      return false;
    }
    const counts = usage ? openaiUsage(chunk.value.usage) : undefined;
    if (counts === undefined) return false;
    this.reported = counts;
    if (choices.length === 0 || FINISHED.test(data)) this.finalUsage();
    return choices.length === 0;
  }

  /** A chunk's generated text: every choice's content, reasoning, refusal and tool call. */
  protected override deltaText(chunk: Obj): string {
    let text = "";
    for (const choice of arr(chunk.choices)) {
      const delta = obj(obj(choice).delta);
      text += str(delta.content) ?? "";
      text += str(delta.reasoning_content) ?? str(delta.reasoning) ?? "";
      text += str(delta.refusal) ?? "";
      for (const call of arr(delta.tool_calls)) {
        const fn = obj(obj(call).function);
        text += (str(fn.name) ?? "") + (str(fn.arguments) ?? "");
      }
    }
    return text;
  }

  /**
   * `[DONE]` or an error, or a choice finished in one of the last two chunks (servers that close
   * without `[DONE]`; the usage chunk may follow the finish).
   */
  override complete(): boolean {
    if (this.terminal) return true;
    return [this.#last, this.#beforeLast].some((d) => d !== undefined && FINISHED.test(d));
  }

  /** The choices' `finish_reason` in the last two chunks (parsed only when asked). */
  override finishReasons(): string[] {
    const reasons: string[] = [];
    for (const data of [this.#beforeLast, this.#last]) {
      if (data === undefined || !FINISHED.test(data)) continue;
      const chunk = readObject(data);
      const choices = chunk.ok ? chunk.value.choices : undefined;
      if (!Array.isArray(choices)) continue;
      for (const choice of choices) {
        const reason = typeof choice === "object" && choice !== null ? choice.finish_reason : undefined;
        if (typeof reason === "string") reasons.push(reason);
      }
    }
    return reasons;
  }
}

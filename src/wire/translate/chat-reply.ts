// Chat Completions answers ↔ the internal form: reading an upstream's completion object and chunk
// stream, and writing the completion object and chunk stream a Chat client expects (role chunk,
// content / refusal / tool_call chunks, finish chunk, usage chunk, `data: [DONE]`).
// `message.refusal` and delta `refusal` are read as a refusal part and written back as themselves.
// Drop rule (docs/api.md, "Translation"): Chat has no thinking in its answer; thinking text and
// signatures from another protocol are dropped (reasoning tokens still appear in
// completion_tokens_details). A non-standard `reasoning_content` from an upstream is read as thinking.
// Hold rule: a Chat stream may interleave its parts (arguments of call 0 after call 1 started, text
// after a call began), while the internal events keep one part open at a time (Messages blocks are
// strictly sequential). Once a tool call is open it stays open and streams live; any part that would
// close it is held back whole and emitted complete, in first-arrival order, when the answer ends.
import { sseEvent, sseJson } from "../sse.ts";
import {
  type IrEvent,
  type IrReply,
  type IrReplyPart,
  type IrStop,
  type IrUsage,
  ZERO_USAGE,
} from "../text-form.ts";
import { type Converted, JsonReplyReader, type ReplyWriter } from "./convert.ts";
import { stopFromChat, stopToChat, usageFromOpenAI, usageToChat } from "./finish.ts";
import { arr, type Obj, obj, str } from "./narrow.ts";
import { ChatToolCallStart, lacking, lackingEvent } from "./reply-check.ts";

/** A complete Chat answer in the internal form. */
export function readChatReply(json: Obj): IrReply {
  const choice = obj(arr(json.choices)[0]);
  const message = obj(choice.message);
  const parts: IrReplyPart[] = [];
  const thinking = str(message.reasoning_content);
  if (thinking) parts.push({ type: "thinking", text: thinking, signature: undefined });
  const text = str(message.content);
  if (text) parts.push({ type: "text", text });
  const refusal = str(message.refusal);
  if (refusal) parts.push({ type: "refusal", text: refusal });
  for (const raw of arr(message.tool_calls)) {
    const call = obj(raw);
    const fn = obj(call.function);
    parts.push({
      type: "tool_call",
      id: str(call.id) ?? "",
      name: str(fn.name) ?? "",
      arguments: str(fn.arguments) ?? "",
    });
  }
  return {
    id: str(json.id) ?? "",
    model: str(json.model) ?? "",
    parts,
    stop: stopFromChat(choice.finish_reason),
    stopSequence: undefined,
    usage: usageFromOpenAI(json.usage),
  };
}

/** Reads a Chat chunk stream into internal events. */
export class ChatReader extends JsonReplyReader {
  #started = false;
  #next = 0;
  /** The part streaming live. */
  #open: number | undefined;
  #openIsTool = false;
  /** The part begun last, live or held: text, reasoning or refusal continue it only if it is theirs. */
  #last: number | undefined;
  /** Parts begun while a tool call was open, with their events so far, in first-arrival order. */
  readonly #held = new Map<number, IrEvent[]>();
  #text: number | undefined;
  #refusal: number | undefined;
  #thinking: number | undefined;
  readonly #tools = new Map<number, number>();
  #stop: IrStop | undefined;
  #usage: IrUsage | undefined;
  override read(name: string | undefined, data: string): Converted<readonly IrEvent[]> {
    if (!this.done && data === "[DONE]") return { ok: true, value: this.#finish() };
    return super.read(name, data);
  }

  protected event(_name: string | undefined, chunk: Obj): IrEvent[] {
    if (chunk.error !== undefined) {
      this.done = true;
      const message = str(obj(chunk.error).message) ?? "The upstream reported an error.";
      // Held parts reach the client whole before the error, never half-built after it.
      const out = this.#held.size > 0 ? this.#release() : [];
      out.push({ type: "error", message });
      return out;
    }
    const out: IrEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      out.push({ type: "start", id: str(chunk.id) ?? "", model: str(chunk.model) ?? "", usage: undefined });
    }
    if (chunk.usage !== null && typeof chunk.usage === "object") this.#usage = usageFromOpenAI(chunk.usage);
    const choice = obj(arr(chunk.choices)[0]);
    const delta = obj(choice.delta);
    const thinking = str(delta.reasoning_content) ?? str(delta.reasoning);
    if (thinking) {
      // A part another one followed (text after a tool call) is not continued: a new part starts.
      if (this.#thinking === undefined || this.#last !== this.#thinking)
        this.#thinking = this.#begin(out, { type: "thinking" });
      this.#emit(out, { type: "thinking", index: this.#thinking, text: thinking });
    }
    const content = str(delta.content);
    if (content) {
      if (this.#text === undefined || this.#last !== this.#text)
        this.#text = this.#begin(out, { type: "text" });
      this.#emit(out, { type: "text", index: this.#text, text: content });
    }
    const refusal = str(delta.refusal);
    if (refusal) {
      if (this.#refusal === undefined || this.#last !== this.#refusal)
        this.#refusal = this.#begin(out, { type: "refusal" });
      this.#emit(out, { type: "text", index: this.#refusal, text: refusal });
    }
    for (const [i, raw] of arr(delta.tool_calls).entries()) {
      const missing = this.#toolDelta(out, obj(raw), `choices[0].delta.tool_calls[${i}]`);
      if (missing === undefined) continue;
      this.done = true;
      out.push(lackingEvent("Chat Completions", missing));
      return out;
    }
    if (choice.finish_reason) this.#stop = stopFromChat(choice.finish_reason);
    return out;
  }

  /** Starts a part: live, closing the open one, unless a tool call is open; then it is held. */
  #begin(out: IrEvent[], part: Extract<IrEvent, { type: "part_start" }>["part"]): number {
    const index = this.#next++;
    this.#last = index;
    const start: IrEvent = { type: "part_start", index, part };
    if (this.#openIsTool) {
      this.#held.set(index, [start]);
      return index;
    }
    if (this.#open !== undefined) out.push({ type: "part_stop", index: this.#open });
    this.#open = index;
    this.#openIsTool = part.type === "tool_call";
    out.push(start);
    return index;
  }

  /** A part's content event: to the client now if its part is live, else kept with its held part. */
  #emit(out: IrEvent[], event: Extract<IrEvent, { index: number }>): void {
    const held = this.#held.get(event.index);
    if (held === undefined) out.push(event);
    else held.push(event);
  }

  /** One tool call delta; what its first delta lacks (the call's name), if anything. */
  #toolDelta(out: IrEvent[], call: Obj, path: string): string | undefined {
    const key = typeof call.index === "number" ? call.index : 0;
    const fn = obj(call.function);
    let index = this.#tools.get(key);
    if (index === undefined) {
      const missing = lacking(ChatToolCallStart, call, path);
      if (missing !== undefined) return missing;
      index = this.#begin(out, {
        type: "tool_call",
        id: str(call.id) ?? `call_${key}`,
        name: str(fn.name) ?? "",
      });
      this.#tools.set(key, index);
    }
    const args = str(fn.arguments);
    if (args) this.#emit(out, { type: "arguments", index, json: args });
    return undefined;
  }

  /** Stops the open part, then emits each held part complete; nothing is open afterwards. */
  #release(): IrEvent[] {
    const out: IrEvent[] = [];
    if (this.#open !== undefined) out.push({ type: "part_stop", index: this.#open });
    for (const [index, events] of this.#held) out.push(...events, { type: "part_stop", index });
    this.#held.clear();
    this.#open = undefined;
    this.#openIsTool = false;
    return out;
  }

  #finish(): IrEvent[] {
    this.done = true;
    const out = this.#release();
    const stop = this.#stop ?? "end";
    out.push({ type: "finish", stop, stopSequence: undefined, usage: this.#usage ?? ZERO_USAGE });
    return out;
  }

  override end(): IrEvent[] {
    // Some compatible servers end without [DONE] after the finish chunk; that is still complete.
    return this.done || this.#stop === undefined ? [] : this.#finish();
  }
}

/** Writes internal events as a Chat chunk stream, and the completion object. */
export class ChatWriter implements ReplyWriter {
  readonly #model: string;
  readonly #id = `chatcmpl-${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  readonly #created = Math.floor(Date.now() / 1000);
  #text = "";
  #refusal: string | null = null;
  /** Indexes of refusal parts: their text events are written as `refusal` deltas. */
  readonly #refusals = new Set<number>();
  readonly #calls = new Map<number, { slot: number; id: string; name: string; arguments: string }>();
  #finish: IrStop | undefined;
  #usage: IrUsage | undefined;
  readonly #usageChunk: boolean;

  /** `usageChunk`: whether the stream ends with the usage-only chunk (`stream_options.include_usage`). */
  constructor(model: string, usageChunk = true) {
    this.#model = model;
    this.#usageChunk = usageChunk;
  }

  #chunk(delta: Obj, finish: string | null = null): Uint8Array {
    return sseJson(undefined, {
      id: this.#id,
      object: "chat.completion.chunk",
      created: this.#created,
      model: this.#model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  }

  push(event: IrEvent): Uint8Array[] {
    switch (event.type) {
      case "start":
        return [this.#chunk({ role: "assistant", content: "" })];
      case "part_start": {
        if (event.part.type === "refusal") {
          this.#refusals.add(event.index);
          this.#refusal ??= "";
          return [];
        }
        if (event.part.type !== "tool_call") return [];
        const slot = this.#calls.size;
        this.#calls.set(event.index, { slot, id: event.part.id, name: event.part.name, arguments: "" });
        const fn = { name: event.part.name, arguments: "" };
        return [
          this.#chunk({ tool_calls: [{ index: slot, id: event.part.id, type: "function", function: fn }] }),
        ];
      }
      case "text":
        if (this.#refusals.has(event.index)) {
          this.#refusal = (this.#refusal ?? "") + event.text;
          return [this.#chunk({ refusal: event.text })];
        }
        this.#text += event.text;
        return [this.#chunk({ content: event.text })];
      case "arguments": {
        const call = this.#calls.get(event.index);
        if (call === undefined) return [];
        call.arguments += event.json;
        return [this.#chunk({ tool_calls: [{ index: call.slot, function: { arguments: event.json } }] })];
      }
      case "finish": {
        this.#finish = event.stop;
        this.#usage = event.usage;
        const finish = this.#chunk({}, stopToChat(event.stop));
        if (!this.#usageChunk) return [finish, sseEvent(undefined, "[DONE]")];
        const usage = sseJson(undefined, {
          id: this.#id,
          object: "chat.completion.chunk",
          created: this.#created,
          model: this.#model,
          choices: [],
          usage: usageToChat(event.usage),
        });
        return [finish, usage, sseEvent(undefined, "[DONE]")];
      }
      case "error":
        return [
          sseJson(undefined, {
            error: { message: event.message, type: "server_error", param: null, code: "upstream_failed" },
          }),
        ];
      default:
        return [];
    }
  }

  answer(): Obj {
    const calls = [...this.#calls.values()].map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
    const message: Obj = {
      role: "assistant",
      content: (calls.length > 0 || this.#refusal !== null) && this.#text === "" ? null : this.#text,
      refusal: this.#refusal,
    };
    if (calls.length > 0) message.tool_calls = calls;
    return {
      id: this.#id,
      object: "chat.completion",
      created: this.#created,
      model: this.#model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: stopToChat(this.#finish ?? "end") }],
      usage: usageToChat(this.#usage ?? ZERO_USAGE),
    };
  }
}

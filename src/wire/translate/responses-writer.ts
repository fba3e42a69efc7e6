// Writing the internal form as a Responses answer: the SSE event sequence a Responses client
// expects (created, in_progress, output_item.added / content_part / deltas / done for every item,
// completed or incomplete with the full response, integer usage) and the same response object
// for a non-stream answer. Every object carries every field the official schema marks required
// (see responseShell). Every item gets its `response.output_item.done` (Codex keeps history from
// those). Text becomes an `output_text` part and a refusal a `refusal` part, each in its own
// message item; redacted thinking becomes a reasoning item carrying only encrypted_content (its data,
// marked so that the item sent back is redacted thinking again: reasoning-seal.ts).
import { isObject } from "../../base/plain-object.ts";
import { sseJson } from "../sse.ts";
import type { IrEvent, IrPartStart, IrStop, IrUsage } from "../text-form.ts";
import type { ReplyWriter } from "./convert.ts";
import { usageToResponses } from "./finish.ts";
import { newId, type Obj } from "./narrow.ts";
import { sealRedacted } from "./reasoning-seal.ts";

/**
 * A Responses `response` object with every required field. Request parameters the gateway does
 * not echo are given as the API documents their defaults or unknown (`null`). `usage` is left out
 * until known: the schema makes it optional but not nullable.
 */
export function responseShell(id: string, model: unknown, createdAt: number): Obj {
  return {
    id,
    object: "response",
    created_at: createdAt,
    status: "in_progress",
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model,
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: null,
    temperature: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: null,
    truncation: "disabled",
    metadata: {},
  };
}

/** Fields of a Responses request a response object echoes, where the request gave them. */
export function echoRequest(shell: Obj, request: Obj): Obj {
  const out = { ...shell };
  const pick = (name: string, ok: (v: unknown) => boolean) => {
    if (ok(request[name])) out[name] = request[name];
  };
  const isNumber = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  pick("instructions", (v) => typeof v === "string");
  pick("temperature", isNumber);
  pick("top_p", isNumber);
  pick("max_output_tokens", isNumber);
  pick("tools", Array.isArray);
  pick("tool_choice", (v) => typeof v === "string" || isObject(v));
  pick("parallel_tool_calls", (v) => typeof v === "boolean");
  pick("metadata", isObject);
  pick("reasoning", isObject);
  pick("text", isObject);
  return out;
}

interface Building {
  outputIndex: number;
  kind: IrPartStart["type"];
  item: Obj;
  text: string;
  /** Reasoning: whether the summary part was opened. */
  summaryOpen: boolean;
}

function startItem(part: IrPartStart): Obj {
  switch (part.type) {
    case "text":
    case "refusal":
      return { type: "message", id: `msg_${newId()}`, status: "in_progress", role: "assistant", content: [] };
    case "tool_call":
      return {
        type: "function_call",
        id: `fc_${newId()}`,
        call_id: part.id,
        name: part.name,
        arguments: "",
        status: "in_progress",
      };
    case "thinking":
      return { type: "reasoning", id: `rs_${newId()}`, summary: [] };
    case "redacted_thinking":
      return {
        type: "reasoning",
        id: `rs_${newId()}`,
        summary: [],
        encrypted_content: sealRedacted(part.data),
      };
  }
}

/** The content part of a message item holding `text`, empty while it streams. */
function contentPart(kind: "text" | "refusal", text: string): Obj {
  return kind === "refusal"
    ? { type: "refusal", refusal: text }
    : { type: "output_text", text, annotations: [], logprobs: [] };
}

export class ResponsesWriter implements ReplyWriter {
  readonly #shell: Obj;
  readonly #output: Obj[] = [];
  readonly #parts = new Map<number, Building>();
  #seq = 0;
  #nextOutput = 0;
  #status = "in_progress";
  #usage: IrUsage | undefined;
  #stop: IrStop | undefined;
  #error: Obj | null = null;

  /** `model` is the id the client asked for; `request`, the client's body, whose parameters the answer echoes. */
  constructor(model: string, request?: Obj) {
    const shell = responseShell(`resp_${newId()}`, model, Math.floor(Date.now() / 1000));
    this.#shell = request === undefined ? shell : echoRequest(shell, request);
  }

  get id(): string {
    return String(this.#shell.id);
  }

  #ev(type: string, fields: Obj): Uint8Array {
    return sseJson(type, { type, ...fields, sequence_number: this.#seq++ });
  }

  answer(): Obj {
    const incomplete = this.#status === "incomplete";
    return {
      ...this.#shell,
      status: this.#status,
      completed_at: this.#status === "completed" ? Math.floor(Date.now() / 1000) : null,
      error: this.#error,
      incomplete_details: incomplete
        ? { reason: this.#stop === "refusal" ? "content_filter" : "max_output_tokens" }
        : null,
      output: this.#output.filter((item) => item !== undefined),
      ...(this.#usage ? { usage: usageToResponses(this.#usage) } : {}),
    };
  }

  push(event: IrEvent): Uint8Array[] {
    switch (event.type) {
      case "start": {
        const response = this.answer();
        return [this.#ev("response.created", { response }), this.#ev("response.in_progress", { response })];
      }
      case "part_start":
        return this.#start(event.index, event.part);
      case "text":
      case "thinking":
      case "arguments":
        return this.#delta(event);
      case "signature": {
        const b = this.#parts.get(event.index);
        if (b) b.item.encrypted_content = event.signature;
        return [];
      }
      case "part_stop":
        return this.#stopPart(event.index);
      case "finish": {
        this.#usage = event.usage;
        this.#stop = event.stop;
        this.#status = event.stop === "length" || event.stop === "refusal" ? "incomplete" : "completed";
        const name = this.#status === "completed" ? "response.completed" : "response.incomplete";
        return [this.#ev(name, { response: this.answer() })];
      }
      case "error": {
        this.#status = "failed";
        this.#error = { code: "server_error", message: event.message };
        return [
          this.#ev("error", { code: "upstream_failed", message: event.message, param: null }),
          this.#ev("response.failed", { response: this.answer() }),
        ];
      }
    }
  }

  #start(index: number, part: IrPartStart): Uint8Array[] {
    const outputIndex = this.#nextOutput++;
    const item = startItem(part);
    this.#parts.set(index, { outputIndex, kind: part.type, item, text: "", summaryOpen: false });
    const out = [this.#ev("response.output_item.added", { output_index: outputIndex, item: { ...item } })];
    if (part.type === "text" || part.type === "refusal") {
      const at = { item_id: item.id, output_index: outputIndex, content_index: 0 };
      out.push(this.#ev("response.content_part.added", { ...at, part: contentPart(part.type, "") }));
    }
    return out;
  }

  #delta(event: Extract<IrEvent, { type: "text" | "thinking" | "arguments" }>): Uint8Array[] {
    const b = this.#parts.get(event.index);
    if (b === undefined) return [];
    const delta = event.type === "arguments" ? event.json : event.text;
    b.text += delta;
    const at = { item_id: b.item.id, output_index: b.outputIndex };
    if (b.kind === "refusal") return [this.#ev("response.refusal.delta", { ...at, content_index: 0, delta })];
    if (b.kind === "text") {
      return [this.#ev("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] })];
    }
    if (b.kind === "tool_call") return [this.#ev("response.function_call_arguments.delta", { ...at, delta })];
    const out: Uint8Array[] = [];
    if (!b.summaryOpen) {
      b.summaryOpen = true;
      out.push(
        this.#ev("response.reasoning_summary_part.added", {
          ...at,
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        }),
      );
    }
    out.push(this.#ev("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta }));
    return out;
  }

  #stopPart(index: number): Uint8Array[] {
    const b = this.#parts.get(index);
    if (b === undefined) return [];
    this.#parts.delete(index);
    const at = { item_id: b.item.id, output_index: b.outputIndex };
    const out: Uint8Array[] = [];
    const { item, text } = b;
    if (b.kind === "text" || b.kind === "refusal") {
      const part = contentPart(b.kind, text);
      out.push(
        b.kind === "text"
          ? this.#ev("response.output_text.done", { ...at, content_index: 0, text, logprobs: [] })
          : this.#ev("response.refusal.done", { ...at, content_index: 0, refusal: text }),
      );
      out.push(this.#ev("response.content_part.done", { ...at, content_index: 0, part }));
      Object.assign(item, { status: "completed", content: [part] });
    } else if (b.kind === "tool_call") {
      out.push(
        this.#ev("response.function_call_arguments.done", { ...at, name: item.name, arguments: text }),
      );
      Object.assign(item, { status: "completed", arguments: text });
    } else if (b.summaryOpen) {
      const part = { type: "summary_text", text };
      out.push(this.#ev("response.reasoning_summary_text.done", { ...at, summary_index: 0, text }));
      out.push(this.#ev("response.reasoning_summary_part.done", { ...at, summary_index: 0, part }));
      item.summary = [part];
    }
    this.#output[b.outputIndex] = item;
    out.push(this.#ev("response.output_item.done", { output_index: b.outputIndex, item }));
    return out;
  }
}

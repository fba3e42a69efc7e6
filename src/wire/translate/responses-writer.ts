// Writing the internal form as a Responses answer: the SSE event sequence a Responses client
// expects (created, in_progress, output_item.added / content_part / deltas / done for every item,
// completed or incomplete with the full response, integer usage) and the same response object
// for a non-stream answer. Every item gets its `response.output_item.done` (Codex keeps history
// from those). Redacted thinking becomes a reasoning item carrying only encrypted_content.
import { sseJson } from "../sse.ts";
import { usageToResponses } from "./finish.ts";
import type { IrEvent, IrStop, IrUsage, ReplyWriter } from "./ir.ts";
import { newId, type Obj } from "./narrow.ts";

interface Building {
  outputIndex: number;
  item: Obj;
  text: string;
  /** Reasoning: whether the summary part was opened. */
  summaryOpen: boolean;
}

export class ResponsesWriter implements ReplyWriter {
  readonly #model: string;
  readonly #id = `resp_${newId()}`;
  readonly #createdAt = Math.floor(Date.now() / 1000);
  readonly #output: Obj[] = [];
  readonly #parts = new Map<number, Building>();
  #seq = 0;
  #nextOutput = 0;
  #status = "in_progress";
  #usage: IrUsage | undefined;
  #stop: IrStop | undefined;
  #error: Obj | null = null;

  /** `model` is the id the client asked for. */
  constructor(model: string) {
    this.#model = model;
  }

  get id(): string {
    return this.#id;
  }

  #ev(type: string, fields: Obj): Uint8Array {
    return sseJson(type, { type, ...fields, sequence_number: this.#seq++ });
  }

  answer(): Obj {
    const incomplete = this.#status === "incomplete";
    return {
      id: this.#id,
      object: "response",
      created_at: this.#createdAt,
      status: this.#status,
      completed_at: this.#status === "completed" ? Math.floor(Date.now() / 1000) : null,
      error: this.#error,
      incomplete_details: incomplete
        ? { reason: this.#stop === "refusal" ? "content_filter" : "max_output_tokens" }
        : null,
      model: this.#model,
      output: this.#output.filter((item) => item !== undefined),
      parallel_tool_calls: true,
      previous_response_id: null,
      store: false,
      tool_choice: "auto",
      tools: [],
      usage: this.#usage ? usageToResponses(this.#usage) : null,
      metadata: {},
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
        this.#error = { code: "upstream_failed", message: event.message };
        return [
          this.#ev("error", { code: "upstream_failed", message: event.message, param: null }),
          this.#ev("response.failed", { response: this.answer() }),
        ];
      }
    }
  }

  #start(index: number, part: Extract<IrEvent, { type: "part_start" }>["part"]): Uint8Array[] {
    const outputIndex = this.#nextOutput++;
    let item: Obj;
    if (part.type === "text") {
      item = { type: "message", id: `msg_${newId()}`, status: "in_progress", role: "assistant", content: [] };
    } else if (part.type === "tool_call") {
      item = {
        type: "function_call",
        id: `fc_${newId()}`,
        call_id: part.id,
        name: part.name,
        arguments: "",
        status: "in_progress",
      };
    } else {
      item = { type: "reasoning", id: `rs_${newId()}`, summary: [] };
      if (part.type === "redacted_thinking") item.encrypted_content = part.data;
    }
    this.#parts.set(index, { outputIndex, item, text: "", summaryOpen: false });
    const out = [this.#ev("response.output_item.added", { output_index: outputIndex, item: { ...item } })];
    if (part.type === "text") {
      const at = { item_id: item.id, output_index: outputIndex, content_index: 0 };
      out.push(
        this.#ev("response.content_part.added", {
          ...at,
          part: { type: "output_text", text: "", annotations: [] },
        }),
      );
    }
    return out;
  }

  #delta(event: Extract<IrEvent, { type: "text" | "thinking" | "arguments" }>): Uint8Array[] {
    const b = this.#parts.get(event.index);
    if (b === undefined) return [];
    const delta = event.type === "arguments" ? event.json : event.text;
    b.text += delta;
    const at = { item_id: b.item.id, output_index: b.outputIndex };
    if (event.type === "text") {
      return [this.#ev("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] })];
    }
    if (event.type === "arguments")
      return [this.#ev("response.function_call_arguments.delta", { ...at, delta })];
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
    const item = b.item;
    if (item.type === "message") {
      const part = { type: "output_text", text: b.text, annotations: [], logprobs: [] };
      out.push(
        this.#ev("response.output_text.done", { ...at, content_index: 0, text: b.text, logprobs: [] }),
      );
      out.push(this.#ev("response.content_part.done", { ...at, content_index: 0, part }));
      Object.assign(item, { status: "completed", content: [part] });
    } else if (item.type === "function_call") {
      out.push(
        this.#ev("response.function_call_arguments.done", { ...at, name: item.name, arguments: b.text }),
      );
      Object.assign(item, { status: "completed", arguments: b.text });
    } else if (b.summaryOpen) {
      const part = { type: "summary_text", text: b.text };
      out.push(this.#ev("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: b.text }));
      out.push(this.#ev("response.reasoning_summary_part.done", { ...at, summary_index: 0, part }));
      item.summary = [part];
    }
    this.#output[b.outputIndex] = item;
    out.push(this.#ev("response.output_item.done", { output_index: b.outputIndex, item }));
    return out;
  }
}

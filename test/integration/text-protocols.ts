// Protocol drivers for the text tests: how to build a request and read the answer (JSON or SSE)
// in each client protocol, so one table can run the same checks over all of them.
import { payloads, type SseEvent } from "../helpers/sse.ts";

type Obj = Record<string, unknown>;

export interface Call {
  name: string;
  id: string;
  args: unknown;
}

export interface Ask {
  text: string;
  stream?: boolean;
  tool?: { name: string; parameters: Obj };
  schema?: Obj;
  reasoning?: boolean;
  maxTokens?: number;
}

export interface Driver {
  name: "responses" | "chat" | "messages";
  path: string;
  model: string;
  body(ask: Ask): Obj;
  /** The follow-up body that returns `result` for `call`. */
  followUp(ask: Ask, call: Call, result: string): Obj;
  text(json: Obj): string;
  call(json: Obj): Call | undefined;
  usage(json: Obj): { input: number; output: number; reasoning: number };
  /** Text from the stream's deltas. */
  streamText(events: SseEvent[]): string;
  /** True when the stream ended with the protocol's normal terminal event. */
  endedNormally(events: SseEvent[]): boolean;
  /** True when the stream's last event is the protocol's error event. */
  endedWithError(events: SseEvent[]): boolean;
  /** Whether a non-stream answer carries reasoning / thinking output. */
  hasReasoning(json: Obj): boolean;
  errorMessage(json: Obj): string | undefined;
}

const arr = (value: unknown): Obj[] => (Array.isArray(value) ? (value as Obj[]) : []);
const obj = (value: unknown): Obj => (typeof value === "object" && value !== null ? (value as Obj) : {});

export const responses: Driver = {
  name: "responses",
  path: "/v1/responses",
  model: "modelx-5.4",
  body: (a) => ({
    model: "modelx-5.4",
    input: a.text,
    instructions: "Be brief.",
    stream: a.stream ?? false,
    ...(a.tool
      ? { tools: [{ type: "function", name: a.tool.name, parameters: a.tool.parameters, strict: true }] }
      : {}),
    ...(a.schema
      ? { text: { format: { type: "json_schema", name: "out", schema: a.schema, strict: true } } }
      : {}),
    ...(a.reasoning ? { reasoning: { effort: "high" } } : {}),
    ...(a.maxTokens ? { max_output_tokens: a.maxTokens } : {}),
  }),
  followUp: (a, call, result) => ({
    ...responses.body(a),
    input: [
      { role: "user", content: a.text },
      { type: "function_call", call_id: call.id, name: call.name, arguments: JSON.stringify(call.args) },
      { type: "function_call_output", call_id: call.id, output: result },
    ],
  }),
  text: (j) =>
    arr(j.output)
      .filter((i) => i.type === "message")
      .flatMap((i) => arr(i.content).map((p) => String(p.text)))
      .join(""),
  call: (j) => {
    const item = arr(j.output).find((i) => i.type === "function_call");
    return item
      ? { name: String(item.name), id: String(item.call_id), args: JSON.parse(String(item.arguments)) }
      : undefined;
  },
  usage: (j) => {
    const u = obj(j.usage);
    return {
      input: Number(u.input_tokens),
      output: Number(u.output_tokens),
      reasoning: Number(obj(u.output_tokens_details).reasoning_tokens),
    };
  },
  streamText: (events) =>
    payloads(events)
      .filter((p) => p.type === "response.output_text.delta")
      .map((p) => String(p.delta))
      .join(""),
  endedNormally: (events) =>
    ["response.completed", "response.incomplete"].includes(String(events.at(-1)?.event)),
  endedWithError: (events) =>
    events.at(-1)?.event === "response.failed" && events.some((e) => e.event === "error"),
  hasReasoning: (j) => arr(j.output)[0]?.type === "reasoning",
  errorMessage: (j) => obj(j.error).message as string | undefined,
};

export const chat: Driver = {
  name: "chat",
  path: "/v1/chat/completions",
  model: "modelx-5.4",
  body: (a) => ({
    model: "modelx-5.4",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: a.text },
    ],
    stream: a.stream ?? false,
    ...(a.tool
      ? { tools: [{ type: "function", function: { name: a.tool.name, parameters: a.tool.parameters } }] }
      : {}),
    ...(a.schema
      ? { response_format: { type: "json_schema", json_schema: { name: "out", schema: a.schema } } }
      : {}),
    ...(a.reasoning ? { reasoning_effort: "high" } : {}),
    ...(a.maxTokens ? { max_tokens: a.maxTokens } : {}),
  }),
  followUp: (a, call, result) => ({
    ...chat.body(a),
    messages: [
      { role: "user", content: a.text },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.args) },
          },
        ],
      },
      { role: "tool", tool_call_id: call.id, content: result },
    ],
  }),
  text: (j) => String(obj(obj(arr(j.choices)[0]).message).content ?? ""),
  call: (j) => {
    const c = arr(obj(obj(arr(j.choices)[0]).message).tool_calls)[0];
    if (!c) return undefined;
    const fn = obj(c.function);
    return { name: String(fn.name), id: String(c.id), args: JSON.parse(String(fn.arguments)) };
  },
  usage: (j) => {
    const u = obj(j.usage);
    return {
      input: Number(u.prompt_tokens),
      output: Number(u.completion_tokens),
      reasoning: Number(obj(u.completion_tokens_details).reasoning_tokens),
    };
  },
  streamText: (events) =>
    payloads(events)
      .map((p) => obj(obj(arr(p.choices)[0]).delta).content)
      .filter((c) => typeof c === "string")
      .join(""),
  endedNormally: (events) => events.at(-1)?.data === "[DONE]",
  endedWithError: (events) => {
    const last = events.at(-1);
    return last !== undefined && last.data !== "[DONE]" && "error" in obj(JSON.parse(last.data));
  },
  hasReasoning: (j) => chat.usage(j).reasoning > 0,
  errorMessage: (j) => obj(j.error).message as string | undefined,
};

export const messages: Driver = {
  name: "messages",
  path: "/v1/messages",
  model: "modelz-sonnet-4-6",
  body: (a) => ({
    model: "modelz-sonnet-4-6",
    system: "Be brief.",
    max_tokens: a.maxTokens ?? 4096,
    messages: [{ role: "user", content: a.text }],
    stream: a.stream ?? false,
    ...(a.tool ? { tools: [{ name: a.tool.name, input_schema: a.tool.parameters }] } : {}),
    ...(a.schema ? { output_config: { format: { type: "json_schema", schema: a.schema } } } : {}),
    ...(a.reasoning ? { thinking: { type: "enabled", budget_tokens: 1024 } } : {}),
  }),
  followUp: (a, call, result) => ({
    ...messages.body(a),
    messages: [
      { role: "user", content: a.text },
      { role: "assistant", content: [{ type: "tool_use", id: call.id, name: call.name, input: call.args }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: result }] },
    ],
  }),
  text: (j) =>
    arr(j.content)
      .filter((b) => b.type === "text")
      .map((b) => String(b.text))
      .join(""),
  call: (j) => {
    const b = arr(j.content).find((x) => x.type === "tool_use");
    return b ? { name: String(b.name), id: String(b.id), args: b.input } : undefined;
  },
  usage: (j) => {
    const u = obj(j.usage);
    return { input: Number(u.input_tokens), output: Number(u.output_tokens), reasoning: 0 };
  },
  streamText: (events) =>
    payloads(events)
      .map((p) => obj(p.delta))
      .filter((d) => d.type === "text_delta")
      .map((d) => String(d.text))
      .join(""),
  endedNormally: (events) => events.at(-1)?.event === "message_stop",
  endedWithError: (events) => events.at(-1)?.event === "error",
  hasReasoning: (j) => {
    const first = arr(j.content)[0];
    return first?.type === "thinking" && typeof first.signature === "string" && first.signature.length > 0;
  },
  errorMessage: (j) => (j.type === "error" ? (obj(j.error).message as string) : undefined),
};

export const DRIVERS: readonly Driver[] = [responses, chat, messages];

// Chat Completions pieces shared by the tests: a channel's TOML, an upstream's JSON and SSE answers
// (with usage), and a client request through the gateway (`chat`, the suite's one plain request;
// `postChat` when a stream must carry its usage chunk).
import type { RunningGateway } from "./gateway.ts";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

/** An `openai-chat` channel serving `model` at `url`, optionally mapping it to another upstream id. */
export function chatChannelToml(
  name: string,
  url: string,
  model: string,
  priority: number,
  mapped?: string,
): string {
  const map = mapped === undefined ? "" : `model_map = { "${model}" = "${mapped}" }\n`;
  return `[[channels]]\nkind = "openai-chat"\nname = "${name}"\nbase_url = "${url}/v1"\nmodels = ["${model}"]\npriority = ${priority}\n${map}`;
}

const total = (usage: ChatUsage) => ({
  ...usage,
  total_tokens: usage.prompt_tokens + usage.completion_tokens,
});

/** A complete Chat answer from `model` saying `text`, finishing with `stop`. */
export function chatAnswer(model: string, text: string, usage: ChatUsage): Response {
  return Response.json({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage: total(usage),
  });
}

/** A streamed Chat answer: one text delta, the finish chunk, the usage chunk, `[DONE]`. */
export function chatStreamAnswer(model: string, text: string, usage: ChatUsage): Response {
  const chunks = [
    { choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] },
    { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    { choices: [], usage: total(usage) },
  ];
  const events = chunks.map(
    (c) =>
      `data: ${JSON.stringify({ id: "c2", object: "chat.completion.chunk", created: 1, model, ...c })}\n\n`,
  );
  return new Response(`${events.join("")}data: [DONE]\n\n`, {
    headers: { "content-type": "text/event-stream" },
  });
}

export interface ChatRequest {
  model: string;
  stream: boolean;
  content: string;
  maxTokens?: number;
  headers?: Record<string, string>;
}

/** POST /v1/chat/completions with `secret`; streams ask for the usage chunk. */
export function postChat(gw: RunningGateway, secret: string, request: ChatRequest): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...request.headers },
    body: JSON.stringify({
      model: request.model,
      ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
      stream: request.stream,
      ...(request.stream ? { stream_options: { include_usage: true } } : {}),
      messages: [{ role: "user", content: request.content }],
    }),
  });
}

export interface ChatOptions {
  /** Default `modelx-5.4-mini`. */
  model?: string;
  /** The one user message; default "hello". */
  prompt?: string;
  stream?: boolean;
  /** Default 20. */
  maxTokens?: number;
  signal?: AbortSignal;
  /**
   * False: a new connection for this request. Several workers on one port are spread over
   * connections, not requests, and a pooled connection keeps every request on the worker it reached.
   */
  keepalive?: boolean;
}

/** POST /v1/chat/completions to the gateway (or cluster node) at `target.url` with `secret`. */
export function chat(target: { url: string }, secret: string, options: ChatOptions = {}): Promise<Response> {
  const init: RequestInit = {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: options.model ?? "modelx-5.4-mini",
      max_tokens: options.maxTokens ?? 20,
      stream: options.stream ?? false,
      messages: [{ role: "user", content: options.prompt ?? "hello" }],
    }),
  };
  if (options.signal) init.signal = options.signal;
  if (options.keepalive !== undefined) init.keepalive = options.keepalive;
  return fetch(`${target.url}/v1/chat/completions`, init);
}

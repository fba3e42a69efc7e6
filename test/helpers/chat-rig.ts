// Chat Completions pieces shared by the observability tests: a channel's TOML, an upstream's JSON
// and SSE answers (with usage), and a client request through the gateway.
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

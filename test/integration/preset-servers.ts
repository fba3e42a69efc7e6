// What each preset's server says, for the preset tests: its answer and its event stream in that
// server's own shape (where and how it reports usage), the usage the gateway must bill from it, and
// what the server must receive (path, credential header, model name, Chat dialect). Written from
// each server's documentation or server code (docs/upstreams.md), not from the gateway's code.
// Framing is compact JSON with LF line ends, as these servers write it; CRLF, spaced JSON and SSE
// comments are the dialect tests' business.
import type { PresetName } from "../../src/config/presets.ts";

export type ClientProtocol = "chat" | "responses" | "messages";

export interface Billed {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

export interface PresetServer {
  preset: PresetName;
  /** The catalog id the client asks for (each preset serves its own). */
  model: string;
  /** The name the server knows it by (the channel's model_map). */
  upstreamModel: string;
  client: ClientProtocol;
  /** The path the server serves the call on, from its root. */
  path: string;
  /** Channel TOML lines beyond preset, name, base_url, models and model_map. */
  extra: string;
  /** Headers the server must receive (undefined: must be absent). */
  headers: Record<string, string | undefined>;
  /** Chat servers: which output-cap field, parallel_tool_calls kept, where the effort goes. */
  dialect?: { cap: "max_tokens" | "max_completion_tokens"; parallel: boolean; effort: string | undefined };
  text: string;
  billed: Billed;
  answer(): unknown;
  /** The SSE body; `continuous` asks for usage on every chunk (vLLM's continuous_usage_stats). */
  stream(continuous?: boolean): string;
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const event = (name: string, value: Record<string, unknown>) =>
  `event: ${name}\ndata: ${JSON.stringify({ type: name, ...value })}\n\n`;
const halves = (text: string): [string, string] => {
  const at = text.indexOf(" from ");
  return [text.slice(0, at), text.slice(at)];
};

/** A Chat Completions server: `usage` builds its usage object, `place` says where streams carry it. */
function chatServer(
  base: Omit<PresetServer, "answer" | "stream" | "client">,
  usage: (partial: boolean) => Record<string, unknown>,
  place: "separate-chunk" | "every-chunk",
  chunkExtra: Record<string, unknown> = {},
  usageExtra: Record<string, unknown> = {},
): PresetServer {
  const chunk = (choices: unknown[], more: Record<string, unknown> = {}) => ({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_763_900_000,
    model: base.upstreamModel,
    ...chunkExtra,
    choices,
    ...more,
  });
  const delta = (content: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: content,
    finish_reason: finish,
  });
  return {
    ...base,
    client: "chat",
    answer: () => ({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_763_900_000,
      model: base.upstreamModel,
      ...chunkExtra,
      choices: [{ index: 0, message: { role: "assistant", content: base.text }, finish_reason: "stop" }],
      usage: usage(false),
    }),
    stream(continuous = false) {
      const [a, b] = halves(base.text);
      const every = place === "every-chunk" || continuous;
      const partial = every ? { usage: usage(true) } : {};
      const final = every ? { usage: usage(false) } : {};
      let out = data(chunk([delta({ role: "assistant", content: "" })], partial));
      out += data(chunk([delta({ content: a })], partial));
      out += data(chunk([delta({ content: b })], partial));
      out += data(chunk([delta({}, "stop")], final));
      if (place === "separate-chunk") out += data(chunk([], { usage: usage(false), ...usageExtra }));
      return `${out}data: [DONE]\n\n`;
    },
  };
}

const chatCounts = (prompt: number, completion: number, partial: boolean) => ({
  prompt_tokens: prompt,
  completion_tokens: partial ? 1 : completion,
  total_tokens: prompt + (partial ? 1 : completion),
});

const openai: PresetServer = {
  preset: "openai",
  model: "modelx-5.5",
  upstreamModel: "gpt-5.5",
  client: "responses",
  path: "/v1/responses",
  extra: "",
  headers: { authorization: "Bearer sk-test-openai" },
  text: "Hello from OpenAI",
  billed: { input: 31, cached: 8, output: 12, reasoning: 4 },
  answer() {
    return {
      id: "resp_1",
      object: "response",
      created_at: 1_763_900_000,
      status: "completed",
      model: this.upstreamModel,
      output: [
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: this.text, annotations: [], logprobs: [] }],
        },
      ],
      usage: {
        input_tokens: 31,
        input_tokens_details: { cached_tokens: 8 },
        output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 4 },
        total_tokens: 43,
      },
    };
  },
  stream() {
    const done = this.answer() as Record<string, unknown>;
    const created = { ...done, status: "in_progress", output: [], usage: null };
    const [a, b] = halves(this.text);
    const delta = (text: string, n: number) =>
      event("response.output_text.delta", {
        sequence_number: n,
        item_id: "msg_1",
        output_index: 0,
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    return (
      event("response.created", { sequence_number: 0, response: created }) +
      delta(a, 1) +
      delta(b, 2) +
      event("response.completed", { sequence_number: 3, response: done })
    );
  },
};

const anthropic: PresetServer = {
  preset: "anthropic",
  model: "modelz-sonnet-4-6",
  upstreamModel: "claude-sonnet-4-6",
  client: "messages",
  path: "/v1/messages",
  extra: "",
  headers: { "x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01", authorization: undefined },
  text: "Hello from Anthropic",
  // Anthropic's input_tokens exclude cache reads: billed input is 20 + 6.
  billed: { input: 26, cached: 6, output: 9, reasoning: 0 },
  answer() {
    return {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: this.upstreamModel,
      content: [{ type: "text", text: this.text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 6,
        output_tokens: 9,
      },
    };
  },
  stream() {
    const [a, b] = halves(this.text);
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: this.upstreamModel,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 6,
        output_tokens: 1,
      },
    };
    const delta = (text: string) =>
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text } });
    return (
      event("message_start", { message }) +
      event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
      delta(a) +
      delta(b) +
      event("content_block_stop", { index: 0 }) +
      event("message_delta", {
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 9 },
      }) +
      event("message_stop", {})
    );
  },
};

/** OpenRouter: usage always in the last message, with cost and cache details (include_usage is moot). */
const openrouter = chatServer(
  {
    preset: "openrouter",
    model: "modelx-5.4",
    upstreamModel: "meta-llama/llama-3.3-70b-instruct",
    path: "/api/v1/chat/completions",
    extra: "",
    headers: { authorization: "Bearer sk-or-test" },
    dialect: { cap: "max_tokens", parallel: true, effort: "reasoning.effort" },
    text: "Hello from OpenRouter",
    billed: { input: 41, cached: 10, output: 13, reasoning: 3 },
  },
  () => ({
    prompt_tokens: 41,
    completion_tokens: 13,
    total_tokens: 54,
    cost: 0.000_12,
    is_byok: false,
    prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 0, audio_tokens: 0 },
    cost_details: { upstream_inference_cost: null },
    completion_tokens_details: { reasoning_tokens: 3, image_tokens: 0 },
  }),
  "separate-chunk",
  { provider: "Together" },
);

/** DeepSeek: cache hits as prompt_cache_hit_tokens / prompt_cache_miss_tokens (prompt = hit + miss). */
const deepseek = chatServer(
  {
    preset: "deepseek",
    model: "modelx-5.4-mini",
    upstreamModel: "deepseek-chat",
    path: "/chat/completions",
    extra: "",
    headers: { authorization: "Bearer sk-deepseek-test" },
    dialect: { cap: "max_tokens", parallel: false, effort: undefined },
    text: "Hello from DeepSeek",
    billed: { input: 52, cached: 32, output: 14, reasoning: 0 },
  },
  () => ({
    prompt_tokens: 52,
    completion_tokens: 14,
    total_tokens: 66,
    prompt_cache_hit_tokens: 32,
    prompt_cache_miss_tokens: 20,
    completion_tokens_details: { reasoning_tokens: 0 },
  }),
  "separate-chunk",
  { system_fingerprint: "fp_deepseek_test" },
);

/** Gemini's OpenAI-compatible endpoint: usage rides on the chunks, the finish chunk has the totals. */
const gemini = chatServer(
  {
    preset: "gemini",
    model: "modelx-5.3-c",
    upstreamModel: "gemini-2.5-flash",
    path: "/v1beta/openai/chat/completions",
    extra: "",
    headers: { authorization: "Bearer gemini-test-key" },
    dialect: { cap: "max_tokens", parallel: false, effort: "reasoning_effort" },
    text: "Hello from Gemini",
    billed: { input: 17, cached: 0, output: 6, reasoning: 0 },
  },
  (partial) => chatCounts(17, 6, partial),
  "every-chunk",
);

/** Ollama: prompt/completion/total only, in a chunk with empty choices on include_usage. */
const ollama = chatServer(
  {
    preset: "ollama",
    model: "modelx-5.3-c-spark",
    upstreamModel: "llama3.2",
    path: "/v1/chat/completions",
    extra: "",
    headers: { authorization: undefined },
    dialect: { cap: "max_tokens", parallel: false, effort: "reasoning_effort" },
    text: "Hello from Ollama",
    billed: { input: 26, cached: 0, output: 8, reasoning: 0 },
  },
  (partial) => chatCounts(26, 8, partial),
  "separate-chunk",
  { system_fingerprint: "fp_ollama" },
);

/** vLLM: include_usage honoured; continuous_usage_stats adds cumulative usage to every chunk. */
const vllm = chatServer(
  {
    preset: "vllm",
    model: "modelx-5.2",
    upstreamModel: "Qwen/Qwen3-8B",
    path: "/v1/chat/completions",
    extra: 'api_key_env = "MG_TEST_VLLM_KEY"',
    headers: { authorization: "Bearer vllm-test-key" },
    dialect: { cap: "max_completion_tokens", parallel: true, effort: "reasoning_effort" },
    text: "Hello from vLLM",
    billed: { input: 33, cached: 0, output: 11, reasoning: 0 },
  },
  (partial) => ({ ...chatCounts(33, 11, partial), prompt_tokens_details: null }),
  "separate-chunk",
);

/** llama.cpp server: a usage chunk with empty choices and its `timings` on include_usage. */
const llamacpp = chatServer(
  {
    preset: "llamacpp",
    model: "modelz-opus-4-6",
    upstreamModel: "gemma-3-4b-it",
    path: "/v1/chat/completions",
    extra: 'api_key_env = "MG_TEST_LLAMACPP_KEY"',
    headers: { authorization: "Bearer llamacpp-test-key" },
    dialect: { cap: "max_completion_tokens", parallel: true, effort: undefined },
    text: "Hello from llama.cpp",
    billed: { input: 44, cached: 0, output: 15, reasoning: 0 },
  },
  (partial) => chatCounts(44, 15, partial),
  "separate-chunk",
  { system_fingerprint: "b6500-0123abcd" },
  { timings: { prompt_n: 44, prompt_ms: 12.5, predicted_n: 15, predicted_ms: 80.1 } },
);

/** LM Studio: no credential; this channel names an unset variable, which start-up must warn about. */
const lmstudio = chatServer(
  {
    preset: "lmstudio",
    model: "modelz-haiku-4-5-20251001",
    upstreamModel: "qwen2.5-7b-instruct",
    path: "/v1/chat/completions",
    extra: 'api_key_env = "MG_TEST_LMSTUDIO_UNSET"',
    headers: { authorization: undefined },
    dialect: { cap: "max_tokens", parallel: false, effort: undefined },
    text: "Hello from LM Studio",
    billed: { input: 19, cached: 0, output: 7, reasoning: 0 },
  },
  (partial) => chatCounts(19, 7, partial),
  "separate-chunk",
  { system_fingerprint: "lmstudio" },
);

export const SERVERS: readonly PresetServer[] = [
  openai,
  anthropic,
  openrouter,
  deepseek,
  gemini,
  ollama,
  vllm,
  llamacpp,
  lmstudio,
];

/** The credentials the gateway's environment holds (the hosted presets' default variables). */
export const GATEWAY_ENV: Record<string, string> = {
  OPENAI_API_KEY: "sk-test-openai",
  ANTHROPIC_API_KEY: "sk-ant-test",
  OPENROUTER_API_KEY: "sk-or-test",
  DEEPSEEK_API_KEY: "sk-deepseek-test",
  GEMINI_API_KEY: "gemini-test-key",
  MG_TEST_VLLM_KEY: "vllm-test-key",
  MG_TEST_LLAMACPP_KEY: "llamacpp-test-key",
};

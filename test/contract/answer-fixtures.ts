// Upstream answers shaped as the providers publish them, for the answer matrix: for each upstream
// protocol (Responses, Chat Completions, Messages) and each scenario (text, tool call, refusal,
// reasoning / thinking with a signature, redacted thinking, an answer cut by the token limit, a
// stream that breaks off, an error event mid-stream), the complete JSON answer and the SSE events of the same answer. Written from
// the official API references (openai/openai-openapi, anthropic-sdk-typescript types): every
// required field present, usage with cached tokens and, for Anthropic, cache writes.

export type Protocol = "responses" | "chat" | "messages";
export type Scenario = "text" | "tool" | "refusal" | "reasoning" | "redacted" | "length" | "cut" | "failed";

/** The scenarios that end normally (`cut` and `failed` break the stream). */
export const SCENARIOS: readonly Scenario[] = ["text", "tool", "refusal", "reasoning", "redacted", "length"];

export interface SseEvent {
  event: string | undefined;
  data: string;
}

type Obj = Record<string, unknown>;

// The texts carry multi-byte characters so slicing the stream cuts inside them.
export const TEXT = "The harbour wakes slowly — gulls, ropes, and a café’s first light.";
export const REFUSAL = "I can’t help with that request.";
export const THINK = "The user wants the weather; the tool answers that.";
export const SIGNATURE = "EqQBCkYIBxgCKkBsignature0123456789abcdefSIG==";
export const REDACTED = "EmwKAhgBEgy3vaRedactedThinkingData0123456789==";
export const TOOL = { id: "call_7Hq2", name: "get_weather", arguments: '{"city":"Oslo","days":2}' };
export const PREAMBLE = "Checking the forecast.";

/** Token figures every fixture reports (OpenAI form: input includes cached and cache-written tokens). */
export const USAGE = { input: 40, cached: 8, cacheWrite: 4, output: 12, reasoning: 5 };

const CREATED = 1_790_000_000;

function halves(text: string): string[] {
  const cut = Math.ceil(text.length / 2);
  return [text.slice(0, cut), text.slice(cut)];
}

// ---------------------------------------------------------------- Responses

function responsesUsage(): Obj {
  return {
    input_tokens: USAGE.input,
    input_tokens_details: { cached_tokens: USAGE.cached, cache_write_tokens: USAGE.cacheWrite },
    output_tokens: USAGE.output,
    output_tokens_details: { reasoning_tokens: USAGE.reasoning },
    total_tokens: USAGE.input + USAGE.output,
  };
}

function responseObject(model: string, status: string, output: Obj[], usage: Obj | undefined): Obj {
  return {
    id: "resp_0a1b2c3d4e5f",
    object: "response",
    created_at: CREATED,
    status,
    completed_at: status === "completed" ? CREATED + 2 : null,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: "medium", summary: "auto" },
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    ...(usage ? { usage } : {}),
    metadata: {},
  };
}

const outputText = (text: string): Obj => ({ type: "output_text", text, annotations: [], logprobs: [] });

function responsesItems(scenario: Scenario): Obj[] {
  const message = (id: string, content: Obj): Obj => ({
    type: "message",
    id,
    status: "completed",
    role: "assistant",
    content: [content],
  });
  switch (scenario) {
    case "tool":
      return [
        message("msg_01", outputText(PREAMBLE)),
        {
          type: "function_call",
          id: "fc_01",
          call_id: TOOL.id,
          name: TOOL.name,
          arguments: TOOL.arguments,
          status: "completed",
        },
      ];
    case "refusal":
      return [message("msg_01", { type: "refusal", refusal: REFUSAL })];
    case "reasoning":
      return [
        {
          type: "reasoning",
          id: "rs_01",
          summary: [{ type: "summary_text", text: THINK }],
          encrypted_content: SIGNATURE,
        },
        message("msg_02", outputText(TEXT)),
      ];
    case "redacted":
      return [
        { type: "reasoning", id: "rs_01", summary: [], encrypted_content: REDACTED },
        message("msg_02", outputText(TEXT)),
      ];
    default:
      return [message("msg_01", outputText(TEXT))];
  }
}

function responsesItemEvents(item: Obj, outputIndex: number): Obj[] {
  const at = { item_id: item.id, output_index: outputIndex };
  const out: Obj[] = [];
  if (item.type === "message") {
    const part = (item.content as Obj[])[0] as Obj;
    const refusal = part.type === "refusal";
    const text = String(refusal ? part.refusal : part.text);
    out.push({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { ...item, status: "in_progress", content: [] },
    });
    const c = { ...at, content_index: 0 };
    out.push({
      type: "response.content_part.added",
      ...c,
      part: refusal ? { type: "refusal", refusal: "" } : outputText(""),
    });
    for (const delta of halves(text))
      out.push(
        refusal
          ? { type: "response.refusal.delta", ...c, delta }
          : { type: "response.output_text.delta", ...c, delta, logprobs: [] },
      );
    out.push(
      refusal
        ? { type: "response.refusal.done", ...c, refusal: text }
        : { type: "response.output_text.done", ...c, text, logprobs: [] },
    );
    out.push({ type: "response.content_part.done", ...c, part });
  } else if (item.type === "function_call") {
    out.push({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { ...item, arguments: "", status: "in_progress" },
    });
    for (const delta of halves(String(item.arguments)))
      out.push({ type: "response.function_call_arguments.delta", ...at, delta });
    out.push({
      type: "response.function_call_arguments.done",
      ...at,
      name: item.name,
      arguments: item.arguments,
    });
  } else {
    out.push({
      type: "response.output_item.added",
      output_index: outputIndex,
      item: { type: "reasoning", id: item.id, summary: [] },
    });
    for (const [index, s] of (item.summary as Obj[]).entries()) {
      const text = String(s.text);
      const p = { ...at, summary_index: index };
      out.push({
        type: "response.reasoning_summary_part.added",
        ...p,
        part: { type: "summary_text", text: "" },
      });
      for (const delta of halves(text))
        out.push({ type: "response.reasoning_summary_text.delta", ...p, delta });
      out.push({ type: "response.reasoning_summary_text.done", ...p, text });
      out.push({ type: "response.reasoning_summary_part.done", ...p, part: s });
    }
  }
  out.push({ type: "response.output_item.done", output_index: outputIndex, item });
  return out;
}

function responsesAnswer(model: string, scenario: Scenario): Obj {
  if (scenario !== "length")
    return responseObject(model, "completed", responsesItems(scenario), responsesUsage());
  const items = responsesItems(scenario).map((item) => ({ ...item, status: "incomplete" }));
  return {
    ...responseObject(model, "incomplete", items, responsesUsage()),
    incomplete_details: { reason: "max_output_tokens" },
  };
}

function responsesEvents(model: string, scenario: Scenario): Obj[] {
  const start = responseObject(model, "in_progress", [], undefined);
  const items = responsesItems(scenario === "cut" || scenario === "failed" ? "text" : scenario);
  const events: Obj[] = [
    { type: "response.created", response: start },
    { type: "response.in_progress", response: start },
    ...items.flatMap((item, i) => responsesItemEvents(item, i)),
  ];
  if (scenario === "cut") events.splice(4);
  else if (scenario === "failed") {
    events.splice(4);
    const error = { code: "server_error", message: "The model failed mid-answer." };
    events.push({ type: "response.failed", response: { ...start, status: "failed", error } });
  } else {
    const response = responsesAnswer(model, scenario);
    events.push({ type: `response.${String(response.status)}`, response });
  }
  return events.map((e, i) => ({ ...e, sequence_number: i }));
}

// ---------------------------------------------------------------- Chat Completions

function chatUsage(): Obj {
  return {
    prompt_tokens: USAGE.input,
    completion_tokens: USAGE.output,
    total_tokens: USAGE.input + USAGE.output,
    prompt_tokens_details: { cached_tokens: USAGE.cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: USAGE.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

const chatTop = (model: string, object: string): Obj => ({
  id: "chatcmpl-Bx9f2",
  object,
  created: CREATED,
  model,
  service_tier: "default",
  system_fingerprint: "fp_0a1b2c",
});

function chatAnswer(model: string, scenario: Scenario): Obj {
  const message: Obj = { role: "assistant", content: TEXT, refusal: null, annotations: [] };
  let finish = "stop";
  if (scenario === "tool") {
    message.content = PREAMBLE;
    message.tool_calls = [
      { id: TOOL.id, type: "function", function: { name: TOOL.name, arguments: TOOL.arguments } },
    ];
    finish = "tool_calls";
  } else if (scenario === "length") finish = "length";
  else if (scenario === "refusal") {
    message.content = null;
    message.refusal = REFUSAL;
  }
  return {
    ...chatTop(model, "chat.completion"),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: chatUsage(),
  };
}

function chatEvents(model: string, scenario: Scenario, includeUsage: boolean): (Obj | "[DONE]")[] {
  const chunk = (delta: Obj, finish: string | null = null): Obj => ({
    ...chatTop(model, "chat.completion.chunk"),
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const refusal = scenario === "refusal";
  const out: (Obj | "[DONE]")[] = [chunk({ role: "assistant", content: refusal ? null : "", refusal: null })];
  const text = scenario === "tool" ? PREAMBLE : TEXT;
  if (refusal) for (const part of halves(REFUSAL)) out.push(chunk({ refusal: part }));
  else for (const part of halves(text)) out.push(chunk({ content: part }));
  if (scenario === "cut") return out;
  if (scenario === "failed") {
    out.push({
      error: { message: "The model failed mid-answer.", type: "server_error", param: null, code: null },
    });
    return out;
  }
  if (scenario === "tool") {
    const [a, b] = halves(TOOL.arguments);
    out.push(
      chunk({
        tool_calls: [
          { index: 0, id: TOOL.id, type: "function", function: { name: TOOL.name, arguments: "" } },
        ],
      }),
    );
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: a } }] }));
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: b } }] }));
  }
  out.push(chunk({}, { tool: "tool_calls", length: "length" }[String(scenario)] ?? "stop"));
  if (includeUsage) out.push({ ...chatTop(model, "chat.completion.chunk"), choices: [], usage: chatUsage() });
  out.push("[DONE]");
  return out;
}

// ---------------------------------------------------------------- Messages

function messagesUsage(output: number): Obj {
  return {
    input_tokens: USAGE.input - USAGE.cached - USAGE.cacheWrite,
    cache_creation_input_tokens: USAGE.cacheWrite,
    cache_read_input_tokens: USAGE.cached,
    cache_creation: { ephemeral_5m_input_tokens: USAGE.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: "standard",
    inference_geo: null,
  };
}

function messagesBlocks(scenario: Scenario): Obj[] {
  const text = (t: string): Obj => ({ type: "text", text: t, citations: null });
  switch (scenario) {
    case "tool":
      return [
        text(PREAMBLE),
        {
          type: "tool_use",
          id: "toolu_01",
          name: TOOL.name,
          input: JSON.parse(TOOL.arguments),
          caller: { type: "direct" },
        },
      ];
    case "refusal":
      return [text(REFUSAL)];
    case "reasoning":
      return [{ type: "thinking", thinking: THINK, signature: SIGNATURE }, text(TEXT)];
    case "redacted":
      return [{ type: "redacted_thinking", data: REDACTED }, text(TEXT)];
    default:
      return [text(TEXT)];
  }
}

function stopOf(scenario: Scenario): Obj {
  const refusal = scenario === "refusal";
  return {
    stop_reason:
      { tool: "tool_use", refusal: "refusal", length: "max_tokens" }[String(scenario)] ?? "end_turn",
    stop_sequence: null,
    stop_details: refusal ? { type: "refusal", category: null, explanation: null } : null,
  };
}

function messagesAnswer(model: string, scenario: Scenario): Obj {
  return {
    id: "msg_01XyZ",
    type: "message",
    role: "assistant",
    model,
    content: messagesBlocks(scenario),
    ...stopOf(scenario),
    container: null,
    usage: messagesUsage(USAGE.output),
  };
}

function blockEvents(block: Obj, index: number): Obj[] {
  const delta = (d: Obj): Obj => ({ type: "content_block_delta", index, delta: d });
  const out: Obj[] = [];
  if (block.type === "text") {
    out.push({ type: "content_block_start", index, content_block: { ...block, text: "" } });
    for (const t of halves(String(block.text))) out.push(delta({ type: "text_delta", text: t }));
  } else if (block.type === "thinking") {
    out.push({
      type: "content_block_start",
      index,
      content_block: { ...block, thinking: "", signature: "" },
    });
    for (const t of halves(String(block.thinking))) out.push(delta({ type: "thinking_delta", thinking: t }));
    out.push(delta({ type: "signature_delta", signature: block.signature }));
  } else if (block.type === "tool_use") {
    out.push({ type: "content_block_start", index, content_block: { ...block, input: {} } });
    for (const t of halves(TOOL.arguments)) out.push(delta({ type: "input_json_delta", partial_json: t }));
  } else out.push({ type: "content_block_start", index, content_block: block });
  out.push({ type: "content_block_stop", index });
  return out;
}

function messagesEvents(model: string, scenario: Scenario): Obj[] {
  const start = {
    ...messagesAnswer(model, "text"),
    content: [],
    stop_reason: null,
    stop_details: null,
    usage: messagesUsage(1),
  };
  const blocks = messagesBlocks(scenario === "cut" || scenario === "failed" ? "text" : scenario);
  const events: Obj[] = [
    { type: "message_start", message: start },
    { type: "ping" },
    ...blocks.flatMap((b, i) => blockEvents(b, i)),
  ];
  if (scenario === "cut") return events.slice(0, 4);
  if (scenario === "failed")
    return [
      ...events.slice(0, 4),
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    ];
  const { cache_creation: _c, service_tier: _s, inference_geo: _g, ...usage } = messagesUsage(USAGE.output);
  events.push(
    { type: "message_delta", delta: { ...stopOf(scenario), container: null }, usage },
    { type: "message_stop" },
  );
  return events;
}

// ---------------------------------------------------------------- entry points

/** The complete JSON answer of `protocol` for `scenario`, naming `model`. */
export function upstreamAnswer(protocol: Protocol, model: string, scenario: Scenario): Obj {
  switch (protocol) {
    case "responses":
      return responsesAnswer(model, scenario);
    case "chat":
      return chatAnswer(model, scenario);
    case "messages":
      return messagesAnswer(model, scenario);
  }
}

/** The SSE text of the streamed answer (`includeUsage`: Chat's stream_options.include_usage). */
export function upstreamStream(
  protocol: Protocol,
  model: string,
  scenario: Scenario,
  includeUsage: boolean,
): string {
  const events: SseEvent[] =
    protocol === "chat"
      ? chatEvents(model, scenario, includeUsage).map((e) => ({
          event: undefined,
          data: e === "[DONE]" ? e : JSON.stringify(e),
        }))
      : (protocol === "responses" ? responsesEvents(model, scenario) : messagesEvents(model, scenario)).map(
          (e) => ({
            event: String(e.type),
            data: JSON.stringify(e),
          }),
        );
  return events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${e.data}\n\n`).join("");
}

// The client requests of the outgoing-contract matrix: one scenario per feature that crosses the
// translation (sampling with a small cap, tools, tool loops with assistant history, forced tools
// with reasoning, images, structured output strict and not, json_object, replayed reasoning,
// refusals in history, system and developer messages mid-conversation, prompt caching), each
// written as a valid request of every client protocol that can express it.
type Obj = Record<string, unknown>;
export type ClientProtocol = "responses" | "chat" | "messages";

export interface Scenario {
  name: string;
  /** The body each client protocol sends (model and stream are added by the test); absent: not expressible. */
  bodies: Partial<Record<ClientProtocol, Obj>>;
}

/** A 1×1 PNG as a data URL, and the same bytes as Anthropic's base64 source. */
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const PNG_URL = `data:image/png;base64,${PNG_BASE64}`;
const REMOTE_IMAGE = "https://example.com/harbour.jpg";

/** A tool schema with an optional property and no additionalProperties: not strict-compatible. */
export const LOOSE_SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
  required: ["city"],
};
/** A strict-compatible schema with constraints Anthropic structured outputs do not take. */
export const STRICT_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 2 },
    days: { type: "integer", minimum: 1, maximum: 7 },
    tags: { type: "array", items: { type: "string" }, minItems: 2 },
  },
  required: ["city", "days", "tags"],
  additionalProperties: false,
};

const fnTool = { name: "get_weather", description: "Weather for a city", parameters: LOOSE_SCHEMA };
const tools = {
  responses: [{ type: "function", ...fnTool, strict: false }],
  chat: [{ type: "function", function: fnTool }],
  messages: [{ name: fnTool.name, description: fnTool.description, input_schema: LOOSE_SCHEMA }],
};
const ask = "What is the weather in Paris?";
const args = '{"city":"Paris"}';

export const SCENARIOS: readonly Scenario[] = [
  {
    name: "sampling and a small output cap",
    bodies: {
      responses: {
        instructions: "Be brief.",
        input: "Describe the harbour.",
        max_output_tokens: 16,
        temperature: 0.7,
        top_p: 0.9,
      },
      chat: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Describe the harbour." },
        ],
        max_completion_tokens: 10,
        temperature: 0.7,
        top_p: 0.9,
        stop: ["\n\n"],
      },
      messages: {
        system: "Be brief.",
        messages: [{ role: "user", content: "Describe the harbour." }],
        max_tokens: 10,
        temperature: 0.7,
        stop_sequences: ["\n\n"],
      },
    },
  },
  {
    name: "tools with optional parameters, parallel calls off",
    bodies: {
      responses: { input: ask, tools: tools.responses, tool_choice: "auto", parallel_tool_calls: false },
      chat: {
        messages: [{ role: "user", content: ask }],
        tools: tools.chat,
        tool_choice: "auto",
        parallel_tool_calls: false,
      },
      messages: {
        max_tokens: 512,
        messages: [{ role: "user", content: ask }],
        tools: tools.messages,
        tool_choice: { type: "auto", disable_parallel_tool_use: true },
      },
    },
  },
  {
    name: "tool loop with assistant history and reasoning on",
    bodies: {
      responses: {
        input: [
          { role: "user", content: ask },
          { role: "assistant", content: "Let me check." },
          { type: "function_call", call_id: "call_1", name: "get_weather", arguments: args },
          { type: "function_call_output", call_id: "call_1", output: "18 C and sunny" },
        ],
        tools: tools.responses,
        reasoning: { effort: "medium" },
        max_output_tokens: 4000,
      },
      chat: {
        messages: [
          { role: "user", content: ask },
          {
            role: "assistant",
            content: "Let me check.",
            tool_calls: [
              { id: "call_1", type: "function", function: { name: "get_weather", arguments: args } },
            ],
          },
          { role: "tool", tool_call_id: "call_1", content: "18 C and sunny" },
        ],
        tools: tools.chat,
        reasoning_effort: "medium",
        max_completion_tokens: 4000,
      },
      messages: {
        max_tokens: 4000,
        thinking: { type: "enabled", budget_tokens: 1024 },
        tools: tools.messages,
        messages: [
          { role: "user", content: ask },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "The user wants weather.", signature: "sig-abc" },
              { type: "text", text: "Let me check." },
              { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
            ],
          },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18 C and sunny" }],
          },
        ],
      },
    },
  },
  {
    name: "a forced tool with reasoning asked",
    bodies: {
      responses: {
        input: ask,
        tools: tools.responses,
        tool_choice: { type: "function", name: "get_weather" },
        reasoning: { effort: "high" },
        max_output_tokens: 4000,
      },
      chat: {
        messages: [{ role: "user", content: ask }],
        tools: tools.chat,
        tool_choice: "required",
        reasoning_effort: "high",
        max_completion_tokens: 4000,
      },
      messages: {
        max_tokens: 4000,
        messages: [{ role: "user", content: ask }],
        tools: tools.messages,
        tool_choice: { type: "tool", name: "get_weather" },
        output_config: { effort: "high" },
      },
    },
  },
  {
    name: "images in the input and in a tool result",
    bodies: {
      responses: {
        input: [
          {
            role: "user",
            content: [
              { type: "input_text", text: "What is in these pictures?" },
              { type: "input_image", image_url: PNG_URL, detail: "auto" },
              { type: "input_image", image_url: REMOTE_IMAGE, detail: "low" },
            ],
          },
          { type: "function_call", call_id: "call_2", name: "get_weather", arguments: args },
          {
            type: "function_call_output",
            call_id: "call_2",
            output: [
              { type: "input_text", text: "radar" },
              { type: "input_image", image_url: PNG_URL, detail: "auto" },
            ],
          },
        ],
        tools: tools.responses,
      },
      chat: {
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is in these pictures?" },
              { type: "image_url", image_url: { url: PNG_URL } },
              { type: "image_url", image_url: { url: REMOTE_IMAGE, detail: "low" } },
            ],
          },
        ],
      },
      messages: {
        max_tokens: 512,
        tools: tools.messages,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is in these pictures?" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
              { type: "image", source: { type: "url", url: REMOTE_IMAGE } },
            ],
          },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Paris" } }],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_2",
                content: [
                  { type: "text", text: "radar" },
                  { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } },
                ],
              },
              { type: "text", text: "Describe the radar too." },
            ],
          },
        ],
      },
    },
  },
  {
    name: "structured output with a schema that is not strict-compatible",
    bodies: {
      responses: {
        input: "Weather in Paris as data.",
        text: { format: { type: "json_schema", name: "weather", schema: LOOSE_SCHEMA } },
      },
      chat: {
        messages: [{ role: "user", content: "Weather in Paris as data." }],
        response_format: { type: "json_schema", json_schema: { name: "weather", schema: LOOSE_SCHEMA } },
      },
      messages: {
        max_tokens: 512,
        messages: [{ role: "user", content: "Weather in Paris as data." }],
        output_config: {
          format: { type: "json_schema", schema: { ...LOOSE_SCHEMA, additionalProperties: false } },
        },
      },
    },
  },
  {
    name: "structured output with a strict schema",
    bodies: {
      responses: {
        input: "Weather in Paris as data.",
        text: { format: { type: "json_schema", name: "weather", schema: STRICT_SCHEMA, strict: true } },
      },
      chat: {
        messages: [{ role: "user", content: "Weather in Paris as data." }],
        response_format: {
          type: "json_schema",
          json_schema: { name: "weather", schema: STRICT_SCHEMA, strict: true },
        },
      },
      messages: {
        max_tokens: 512,
        messages: [{ role: "user", content: "Weather in Paris as data." }],
        output_config: {
          format: {
            type: "json_schema",
            schema: {
              type: "object",
              properties: { city: { type: "string" }, days: { type: "integer" } },
              required: ["city", "days"],
              additionalProperties: false,
            },
          },
        },
      },
    },
  },
  {
    name: "json_object output",
    bodies: {
      responses: { input: "List three colours as JSON.", text: { format: { type: "json_object" } } },
      chat: {
        messages: [{ role: "user", content: "List three colours as JSON." }],
        response_format: { type: "json_object" },
      },
    },
  },
  {
    name: "reasoning replayed from history",
    bodies: {
      responses: {
        input: [
          { role: "user", content: ask },
          {
            type: "reasoning",
            id: "rs_1",
            summary: [{ type: "summary_text", text: "Look up the weather." }],
            encrypted_content: "enc-opaque",
          },
          { role: "assistant", content: "Sunny, 18 C." },
          { role: "user", content: "And tomorrow?" },
        ],
        reasoning: { effort: "low", summary: "auto" },
        include: ["reasoning.encrypted_content"],
        store: false,
        max_output_tokens: 4000,
      },
      chat: {
        messages: [
          { role: "user", content: ask },
          { role: "assistant", content: "Sunny, 18 C." },
          { role: "user", content: "And tomorrow?" },
        ],
        reasoning_effort: "low",
        max_completion_tokens: 4000,
      },
      messages: {
        max_tokens: 4000,
        thinking: { type: "enabled", budget_tokens: 2048 },
        messages: [
          { role: "user", content: ask },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "Look up the weather.", signature: "sig-1" },
              { type: "redacted_thinking", data: "redacted-opaque" },
              { type: "text", text: "Sunny, 18 C." },
            ],
          },
          { role: "user", content: "And tomorrow?" },
        ],
      },
    },
  },
  {
    name: "a refusal in the history",
    bodies: {
      responses: {
        input: [
          { role: "user", content: "Help me pick a lock." },
          {
            type: "message",
            id: "msg_1",
            role: "assistant",
            status: "completed",
            content: [{ type: "refusal", refusal: "I can't help with that." }],
          },
          { role: "user", content: "Then tell me a joke." },
        ],
      },
      chat: {
        messages: [
          { role: "user", content: "Help me pick a lock." },
          { role: "assistant", content: null, refusal: "I can't help with that." },
          { role: "user", content: "Then tell me a joke." },
        ],
      },
      messages: {
        max_tokens: 512,
        messages: [
          { role: "user", content: "Help me pick a lock." },
          { role: "assistant", content: "I can't help with that." },
          { role: "user", content: "Then tell me a joke." },
        ],
      },
    },
  },
  {
    name: "system and developer messages mid-conversation",
    bodies: {
      responses: {
        input: [
          { role: "developer", content: "Answer in French." },
          { role: "user", content: "Hello." },
          {
            type: "message",
            id: "msg_2",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: "Bonjour.", annotations: [] }],
          },
          { role: "system", content: "From now on answer in German." },
          { role: "user", content: "How are you?" },
        ],
      },
      chat: {
        messages: [
          { role: "system", content: "Answer in French." },
          { role: "user", content: "Hello." },
          { role: "assistant", content: "Bonjour." },
          { role: "developer", content: "From now on answer in German." },
          { role: "user", content: "How are you?" },
        ],
      },
      messages: {
        max_tokens: 512,
        system: "Answer in French.",
        messages: [
          { role: "user", content: "Hello." },
          { role: "assistant", content: "Bonjour." },
          { role: "system", content: "From now on answer in German." },
          { role: "user", content: "How are you?" },
        ],
      },
    },
  },
  {
    name: "prompt caching hints",
    bodies: {
      responses: {
        instructions: "You are a harbour guide.",
        input: "Tides today?",
        prompt_cache_key: "tenant-42",
      },
      chat: {
        messages: [
          { role: "system", content: "You are a harbour guide." },
          { role: "user", content: "Tides today?" },
        ],
        prompt_cache_key: "tenant-42",
      },
      messages: {
        max_tokens: 512,
        system: [{ type: "text", text: "You are a harbour guide.", cache_control: { type: "ephemeral" } }],
        tools: [{ ...tools.messages[0], cache_control: { type: "ephemeral", ttl: "1h" } }],
        messages: [
          {
            role: "user",
            content: [{ type: "text", text: "Tides today?", cache_control: { type: "ephemeral" } }],
          },
        ],
      },
    },
  },
];

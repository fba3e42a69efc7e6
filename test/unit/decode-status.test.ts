// The one decode rule, on both kinds of endpoint: a wrong type or shape is 400, a number outside
// its range is 422, and the error names the field either way.
import { describe, expect, test } from "bun:test";
import { decodeChatRequest } from "../../src/wire/chat.ts";
import { parseOrThrow } from "../../src/wire/decode.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { GenerationBodySchema } from "../../src/wire/images.ts";
import { decodeMessagesRequest } from "../../src/wire/messages.ts";
import { decodeResponsesRequest } from "../../src/wire/responses.ts";

function refusal(run: () => unknown): { status: number; param: string | null } {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return { status: error.status, param: error.param ?? null };
    throw error;
  }
  throw new Error("expected a refusal");
}

const chat = { model: "m", messages: [{ role: "user", content: "hi" }] };
const responses = { model: "m", input: "hi" };
const messages = { model: "m", max_tokens: 100, messages: [{ role: "user", content: "hi" }] };
const image = { model: "modelx-image-2", prompt: "a cat" };

describe("one decode rule: type errors 400, ranges 422", () => {
  test("text and image endpoints", () => {
    const cases: [() => unknown, number, string][] = [
      [() => decodeChatRequest({ ...chat, temperature: "hot" }), 400, "temperature"],
      [() => decodeChatRequest({ ...chat, temperature: 3 }), 422, "temperature"],
      [() => decodeChatRequest({ ...chat, max_tokens: 1.5 }), 400, "max_tokens"],
      [() => decodeChatRequest({ ...chat, max_tokens: 0 }), 422, "max_tokens"],
      [() => decodeResponsesRequest({ ...responses, top_p: 2 }), 422, "top_p"],
      [() => decodeResponsesRequest({ ...responses, input: 5 }), 400, "input"],
      [() => decodeMessagesRequest({ ...messages, max_tokens: "many" }), 400, "max_tokens"],
      [() => decodeMessagesRequest({ ...messages, max_tokens: -5 }), 422, "max_tokens"],
      [() => parseOrThrow(GenerationBodySchema, { ...image, n: "two" }), 400, "n"],
      [() => parseOrThrow(GenerationBodySchema, { ...image, n: 11 }), 422, "n"],
    ];
    for (const [run, status, param] of cases) expect(refusal(run)).toEqual({ status, param });
  });
});

// A Responses reasoning item crossing a Messages client and back: the client gets its id sealed in
// the thinking signature (or the redacted block's data), and the Responses upstream receives the
// item again with that id and its encrypted content, as the API requires; an Anthropic upstream
// never receives the seal (it is no Anthropic signature).
import { describe, expect, test } from "bun:test";
import { readMessagesRequest, translateAnswer, writeRequest } from "../../src/protocols/translate.ts";
import type { Obj } from "../../src/wire/translate/narrow.ts";
import { openReasoning, sealReasoning } from "../../src/wire/translate/reasoning-seal.ts";

function upstreamAnswer(summary: string): Obj {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "up",
    output: [
      {
        type: "reasoning",
        id: "rs_42",
        summary: summary === "" ? [] : [{ type: "summary_text", text: summary }],
        encrypted_content: "gAAAA+opaque/=",
      },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Sunny.", annotations: [] }],
      },
    ],
    usage: { input_tokens: 5, output_tokens: 7 },
  };
}

/** The Messages answer's content sent back as the assistant turn of a second request. */
function secondTurn(content: unknown): Parameters<typeof readMessagesRequest>[0] {
  return {
    model: "modelz-sonnet-4-6",
    max_tokens: 200,
    messages: [
      { role: "user", content: "Weather?" },
      { role: "assistant", content: content as never },
      { role: "user", content: "And tomorrow?" },
    ],
  } as Parameters<typeof readMessagesRequest>[0];
}

describe("reasoning items through a Messages client", () => {
  for (const [name, summary, blockType] of [
    ["thinking", "Check the forecast.", "thinking"],
    ["redacted thinking", "", "redacted_thinking"],
  ] as const) {
    test(`${name}: the item's id and encrypted content reach the Responses upstream again`, () => {
      const answer = translateAnswer(
        "responses",
        "messages",
        upstreamAnswer(summary),
        "modelz-sonnet-4-6",
        5,
      );
      const content = answer.content as Obj[];
      const block = content.find((b) => b.type === blockType);
      expect(block).toBeDefined();
      const sealed = String(blockType === "thinking" ? block?.signature : block?.data);
      expect(openReasoning(sealed)).toEqual({ id: "rs_42", encrypted: "gAAAA+opaque/=" });

      const ir = readMessagesRequest(secondTurn(content));
      const toResponses = writeRequest("responses", ir, "up", 1000);
      const reasoning = (toResponses.input as Obj[]).filter((i) => i.type === "reasoning");
      expect(reasoning).toEqual([
        {
          type: "reasoning",
          id: "rs_42",
          summary: summary === "" ? [] : [{ type: "summary_text", text: summary }],
          encrypted_content: "gAAAA+opaque/=",
        },
      ]);

      const toMessages = writeRequest("messages", ir, "up", 1000);
      const blocks = (toMessages.messages as Obj[]).flatMap((m) =>
        Array.isArray(m.content) ? m.content : [],
      );
      expect(blocks.some((b) => b.type === "thinking" || b.type === "redacted_thinking")).toBe(false);
    });
  }

  test("a signature that is not a seal opens to nothing; no id leaves the content as it is", () => {
    expect(openReasoning("EuYBCkQYAiJA")).toBeUndefined();
    expect(openReasoning(undefined)).toBeUndefined();
    expect(sealReasoning(undefined, "enc")).toBe("enc");
    expect(sealReasoning("rs_1", undefined)).toBeUndefined();
  });
});

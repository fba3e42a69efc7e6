// What admission reserves for output against what a translated request lets the upstream write:
// a Messages client's `max_tokens: 10` sent to a Responses channel goes up as the API's minimum of
// 16, so the reservation must cover 16 or the settled cost can pass it.
import { expect, test } from "bun:test";
import { findModel } from "../../src/catalog/models.ts";
import { worstOutputTokens } from "../../src/pipeline/text.ts";
import { readMessagesRequest, writeRequest } from "../../src/protocols/translate.ts";
import { decodeMessagesRequest } from "../../src/wire/messages.ts";

test("the reservation covers the output cap a Responses upstream is actually sent", () => {
  const model = findModel("modelx-5.4");
  if (model === undefined) throw new Error("modelx-5.4 is not in the catalog");
  for (const maxTokens of [1, 10, 15, 16, 500]) {
    const request = decodeMessagesRequest({
      model: model.id,
      max_tokens: maxTokens,
      messages: [{ role: "user", content: "hi" }],
    });
    const sent = writeRequest("responses", readMessagesRequest(request), "up", model.maxOutputTokens);
    const cap = sent.max_output_tokens;
    if (typeof cap !== "number") throw new Error("no max_output_tokens was sent");
    expect(worstOutputTokens(maxTokens, model, 1)).toBeGreaterThanOrEqual(cap);
    expect(worstOutputTokens(maxTokens, model, 3)).toBe(3 * Math.max(maxTokens, 16));
  }
  expect(worstOutputTokens(undefined, model, 2)).toBe(2 * model.maxOutputTokens);
});

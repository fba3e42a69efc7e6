// Which model on which endpoint: every text model on all three text endpoints by default, an
// operator restriction per model in [endpoints.models], the API rules holding on every endpoint
// (unknown model, misplaced reasoning fields), and count_tokens for any text model.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { post } from "./text-setup.ts";

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({
    config: '[endpoints.models]\n"modelz-opus-4-7" = ["messages"]\n"modelx-5.5" = ["responses", "chat"]\n',
  });
}, 30_000);
afterAll(async () => {
  await gw?.dispose();
}, 30_000);

type Err = { error: { message: string; code: string | null } };

test("unrestricted models answer on every endpoint", async () => {
  for (const model of ["modelx-5.4", "modelz-sonnet-4-6"]) {
    expect((await post(gw, "/v1/responses", { model, input: "hi" })).status).toBe(200);
    expect(
      (await post(gw, "/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] })).status,
    ).toBe(200);
    expect(
      (await post(gw, "/v1/messages", { model, max_tokens: 64, messages: [{ role: "user", content: "hi" }] }))
        .status,
    ).toBe(200);
  }
});

test("a restricted model is refused elsewhere with a 400 naming where it is served", async () => {
  const chat = await post(gw, "/v1/chat/completions", {
    model: "modelz-opus-4-7",
    messages: [{ role: "user", content: "hi" }],
  });
  expect(chat.status).toBe(400);
  expect(((await chat.json()) as Err).error.message).toContain("call /v1/messages");
  const messages = await post(gw, "/v1/messages", {
    model: "modelx-5.5",
    max_tokens: 64,
    messages: [{ role: "user", content: "hi" }],
  });
  expect(messages.status).toBe(400);
  expect(await messages.text()).toContain("/v1/responses or /v1/chat/completions");
  expect(
    (
      await post(gw, "/v1/messages", {
        model: "modelz-opus-4-7",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
      })
    ).status,
  ).toBe(200);
});

test("the API rules keep holding on every endpoint; count_tokens answers for any text model", async () => {
  const misplaced = await post(gw, "/v1/responses", {
    model: "modelz-sonnet-4-6",
    input: "hi",
    reasoning_effort: "high",
  });
  expect(misplaced.status).toBe(400);
  expect(((await misplaced.json()) as Err).error.code).toBe("upstream_error");
  const nested = await post(gw, "/v1/chat/completions", {
    model: "modelz-sonnet-4-6",
    messages: [{ role: "user", content: "hi" }],
    reasoning: { effort: "high" },
  });
  expect(((await nested.json()) as Err).error.code).toBe("upstream_error");
  const unknown = await post(gw, "/v1/messages", {
    model: "modelz-haiku-4-5",
    max_tokens: 64,
    messages: [{ role: "user", content: "hi" }],
  });
  expect(unknown.status).toBe(400);
  const count = await post(gw, "/v1/messages/count_tokens?beta=true", {
    model: "modelx-5.4",
    messages: [{ role: "user", content: "hello there" }],
  });
  expect(count.status).toBe(200);
  expect(((await count.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
});

test("a bad [endpoints.models] entry stops the gateway with the field named", async () => {
  const start = startGateway({ config: '[endpoints.models]\n"modelx-image-2" = ["chat"]\n' });
  await expect(start).rejects.toThrow("expected a text model id");
});

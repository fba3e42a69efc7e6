// What an operator and a client read when something is set up wrong, through the compiled binary:
// a catalog model no channel serves is a permanent 404 naming the configuration (no Retry-After),
// the missing-/v1 hint names the gateway's real address, and the log has one line per request —
// a refusal included — while the admin API's polling stays out of it at the default level.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminTokenIn, type RunningGateway, startGateway } from "../helpers/gateway.ts";

let gw: RunningGateway;
let admin = "";

beforeAll(async () => {
  gw = await startGateway({
    config: `[[channels]]\nkind = "sim"\nname = "only-mini"\nmodels = ["modelx-5.4-mini"]\n`,
  });
  admin = adminTokenIn(gw.logs()) ?? "";
});
afterAll(() => gw.dispose());

/** The JSON log lines written so far for this request (the gateway's id, or the id the test sent). */
function linesOf(requestId: string): Record<string, unknown>[] {
  return gw
    .logs()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.request_id === requestId || l.client_request_id === requestId);
}

async function waitForLine(requestId: string): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 10_000;
  while (linesOf(requestId).length === 0) {
    if (Date.now() > deadline) throw new Error(`no log line for ${requestId}:\n${gw.logs()}`);
    await Bun.sleep(20);
  }
  return linesOf(requestId);
}

describe("a catalog model that no configured channel serves", () => {
  test("Chat: 404 model_not_served naming the configuration, no Retry-After", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "modelx-5.2", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("retry-after")).toBeNull();
    const body = (await response.json()) as { error: { code: string; message: string; type: string } };
    expect(body.error.code).toBe("model_not_served");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("modelx-5.2");
    expect(body.error.message).toContain("[[channels]]");
  });

  test("Messages: the same in Anthropic's shape (not_found_error)", async () => {
    const response = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-api-key": gw.key ?? "",
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "modelz-sonnet-4-6",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("retry-after")).toBeNull();
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body.error.type).toBe("not_found_error");
    expect(body.error.message).toContain("[[channels]]");
  });

  test("Images: the same for an image model", async () => {
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "modelx-image-2", prompt: "a lighthouse" }),
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("retry-after")).toBeNull();
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("model_not_served");
    expect(body.error.message).toContain("[[channels]]");
  });

  test("a model its channel serves still answers", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${gw.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelx-5.4-mini",
        max_tokens: 5,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(response.status).toBe(200);
  });
});

test("the missing-/v1 hint names this gateway's address", async () => {
  const response = await fetch(`${gw.url}/chat/completions`, { method: "POST", body: "{}" });
  expect(response.status).toBe(404);
  const { error } = (await response.json()) as { error: { message: string } };
  expect(error.message).toContain(`${gw.url}/v1`);
  expect(error.message).not.toContain("{base_url}");
});

describe("one log line per request", () => {
  test("a refused request writes one line (its access line), with its code", async () => {
    const response = await fetch(`${gw.url}/v1/models`, {
      headers: { authorization: "Bearer sk-not-a-key", "x-request-id": "refused-once-1" },
    });
    expect(response.status).toBe(401);
    const lines = await waitForLine("refused-once-1");
    // A second line would come in the same write burst; the served request after it is a fence.
    await fetch(`${gw.url}/v1/models`, {
      headers: { authorization: `Bearer ${gw.key}`, "x-request-id": "fence-1" },
    });
    await waitForLine("fence-1");
    expect(linesOf("refused-once-1")).toEqual([expect.objectContaining({ msg: "request", status: 401 })]);
    expect(lines[0]?.code).toBe("invalid_api_key");
  });

  test("admin API requests write no line at the default level", async () => {
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${gw.url}/admin/v1/keys`, {
        headers: { authorization: `Bearer ${admin}`, "x-request-id": `admin-poll-${i}` },
      });
      expect(response.status).toBe(200);
    }
    await fetch(`${gw.url}/v1/models`, {
      headers: { authorization: `Bearer ${gw.key}`, "x-request-id": "fence-2" },
    });
    await waitForLine("fence-2");
    expect(gw.logs()).not.toContain("admin-poll-");
  });
});

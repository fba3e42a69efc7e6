import { describe, expect, test } from "bun:test";
import { notFoundError } from "../../src/http/paths.ts";
import { asGatewayError, errorResponse, GatewayError } from "../../src/wire/errors.ts";

describe("error rendering", () => {
  test("OpenAI shape has exactly message, type, param and code", async () => {
    const error = new GatewayError("invalid_value", "temperature must be between 0 and 2, got 3", {
      param: "temperature",
    });
    const response = errorResponse(error, "openai", "req_1");
    expect(response.status).toBe(422);
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(await response.json()).toEqual({
      error: {
        message: "temperature must be between 0 and 2, got 3",
        type: "invalid_request_error",
        param: "temperature",
        code: "invalid_value",
      },
    });
  });

  test("Anthropic shape carries the type, message and request id", async () => {
    const response = errorResponse(new GatewayError("invalid_api_key", "bad key"), "anthropic", "req_2");
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      type: "error",
      error: { type: "authentication_error", message: "bad key" },
      request_id: "req_2",
    });
  });

  test("429s carry Retry-After in seconds and retry-after-ms", () => {
    const error = new GatewayError("rate_limited", "slow down", { retryAfterSeconds: 1.5 });
    const response = errorResponse(error, "openai", "req_3");
    expect(response.headers.get("retry-after")).toBe("2");
    expect(response.headers.get("retry-after-ms")).toBe("1500");
  });

  test("anything else thrown becomes a 500 that leaks no detail", () => {
    const error = asGatewayError(new Error("database password is hunter2"));
    expect(error.status).toBe(500);
    expect(error.message).not.toContain("hunter2");
  });

  test("404 hints explain the /v1 base-URL rule", () => {
    expect(notFoundError("GET", "/v1/v1/models", "http://gw.example:8080").message).toContain("/v1 twice");
    expect(notFoundError("POST", "/chat/completions", "http://gw.example:8080").message).toContain(
      "/v1/chat/completions",
    );
    // The hint names the gateway's real address, never a placeholder.
    for (const path of ["/chat/completions", "/v1/v1/models"]) {
      const message = notFoundError("POST", path, "http://gw.example:8080").message;
      expect(message).toContain("http://gw.example:8080/v1");
      expect(message).not.toContain("{base_url}");
    }
    expect(notFoundError("GET", "/nothing", "http://gw.example:8080").message).toContain(
      "Unknown path GET /nothing",
    );
  });
});

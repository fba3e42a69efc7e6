// Error answers of the simulator in each provider's own shape (OpenAI or Anthropic), so adapters
// map real-looking upstream failures.
import type { ErrorProtocol } from "../../wire/errors.ts";

const OPENAI: Readonly<Record<number, [type: string, code: string | null]>> = {
  400: ["invalid_request_error", null],
  401: ["invalid_request_error", "invalid_api_key"],
  403: ["permission_error", null],
  404: ["invalid_request_error", "model_not_found"],
  429: ["requests", "rate_limit_exceeded"],
  500: ["server_error", null],
  503: ["server_error", null],
  529: ["server_error", null],
};

const ANTHROPIC: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  500: "api_error",
  503: "api_error",
  529: "overloaded_error",
};

/** An error response with `status` in one provider's shape (a text protocol's record names its own). */
export function simError(shape: ErrorProtocol, status: number, message: string): Response {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (status === 429 || status === 503) headers["retry-after"] = "1";
  const body =
    shape === "anthropic"
      ? { type: "error", error: { type: ANTHROPIC[status] ?? "api_error", message } }
      : {
          error: {
            message,
            type: OPENAI[status]?.[0] ?? "server_error",
            param: null,
            code: OPENAI[status]?.[1] ?? null,
          },
        };
  return new Response(JSON.stringify(body), { status, headers });
}

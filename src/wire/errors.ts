// The gateway's one error family: every failure a client can see is a GatewayError of a kind
// from the table below, rendered at the edge in the protocol the client spoke.

/** Which wire shape an error body takes. */
export type ErrorProtocol = "openai" | "anthropic";

type Level = "debug" | "info" | "warn" | "error";

interface KindInfo {
  status: number;
  /** OpenAI `error.type`. */
  openaiType: string;
  /** Anthropic `error.type`. */
  anthropicType: string;
  /** OpenAI `error.code` unless the throw site gives one. */
  code: string | null;
  level: Level;
}

/** The exhaustive table of error kinds: status, wire types, default code and log level. */
const KINDS = {
  invalid_request: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: null,
    level: "debug",
  },
  model_not_found: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "model_not_found",
    level: "debug",
  },
  misplaced_field: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "upstream_error",
    level: "debug",
  },
  invalid_api_key: {
    status: 401,
    openaiType: "invalid_request_error",
    anthropicType: "authentication_error",
    code: "invalid_api_key",
    level: "info",
  },
  model_not_allowed: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "model_not_allowed",
    level: "info",
  },
  forbidden: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "forbidden",
    level: "info",
  },
  ip_not_allowed: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "ip_not_allowed",
    level: "warn",
  },
  not_found: {
    status: 404,
    openaiType: "invalid_request_error",
    anthropicType: "not_found_error",
    code: "unknown_url",
    level: "debug",
  },
  method_not_allowed: {
    status: 405,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "method_not_allowed",
    level: "debug",
  },
  body_timeout: {
    status: 408,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "request_timeout",
    level: "info",
  },
  too_large: {
    status: 413,
    openaiType: "invalid_request_error",
    anthropicType: "request_too_large",
    code: "request_too_large",
    level: "debug",
  },
  invalid_value: {
    status: 422,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "invalid_value",
    level: "debug",
  },
  // nginx's 499: the client closed the connection before the answer; nobody reads this response.
  client_closed: {
    status: 499,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "client_closed_request",
    level: "debug",
  },
  rate_limited: {
    status: 429,
    openaiType: "requests",
    anthropicType: "rate_limit_error",
    code: "rate_limit_exceeded",
    level: "info",
  },
  quota_exceeded: {
    status: 429,
    openaiType: "insufficient_quota",
    anthropicType: "rate_limit_error",
    code: "insufficient_quota",
    level: "info",
  },
  internal: {
    status: 500,
    openaiType: "server_error",
    anthropicType: "api_error",
    code: null,
    level: "error",
  },
  upstream_failed: {
    status: 502,
    openaiType: "server_error",
    anthropicType: "api_error",
    code: "upstream_failed",
    level: "warn",
  },
  no_channel: {
    status: 503,
    openaiType: "server_error",
    anthropicType: "overloaded_error",
    code: "no_healthy_channel",
    level: "warn",
  },
  limiter_unavailable: {
    status: 503,
    openaiType: "server_error",
    anthropicType: "overloaded_error",
    code: "limiter_unavailable",
    level: "error",
  },
  upstream_timeout: {
    status: 504,
    openaiType: "server_error",
    anthropicType: "timeout_error",
    code: "upstream_timeout",
    level: "warn",
  },
} as const satisfies Record<string, KindInfo>;

export type ErrorKind = keyof typeof KINDS;

export interface GatewayErrorOptions {
  /** The request field at fault, as a dotted path (`messages[0].content`). */
  param?: string | null;
  /** Overrides the kind's default `code` (e.g. `daily_quota_exceeded` on a quota error). */
  code?: string;
  /** Seconds the client should wait before retrying (429, 503). */
  retryAfterSeconds?: number;
  /** Extra headers the response must carry (e.g. `Allow` on 405). */
  headers?: Record<string, string>;
}

/** A failure the client sees: message says what was wrong and how to fix it. */
export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly param: string | null;
  readonly code: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(kind: ErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(message);
    this.name = "GatewayError";
    this.kind = kind;
    this.param = options.param ?? null;
    this.code = options.code ?? KINDS[kind].code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
  }

  get status(): number {
    return KINDS[this.kind].status;
  }

  get level(): Level {
    return KINDS[this.kind].level;
  }

  /** The body in the OpenAI shape: `{"error":{"message","type","param","code"}}`. */
  toOpenAI(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return {
      error: { message: this.message, type: KINDS[this.kind].openaiType, param: this.param, code: this.code },
    };
  }

  /** The body in the Anthropic shape: `{"type":"error","error":{"type","message"},"request_id"}`. */
  toAnthropic(requestId: string): {
    type: "error";
    error: { type: string; message: string };
    request_id: string;
  } {
    return {
      type: "error",
      error: { type: KINDS[this.kind].anthropicType, message: this.message },
      request_id: requestId,
    };
  }
}

/** Renders an error as an HTTP response in the client's protocol, with retry headers where due. */
export function errorResponse(error: GatewayError, protocol: ErrorProtocol, requestId: string): Response {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-request-id": requestId,
    ...error.headers,
  };
  if (error.retryAfterSeconds !== undefined) {
    headers["retry-after"] = String(Math.max(1, Math.ceil(error.retryAfterSeconds)));
    headers["retry-after-ms"] = String(Math.round(error.retryAfterSeconds * 1000));
  }
  const body = protocol === "anthropic" ? error.toAnthropic(requestId) : error.toOpenAI();
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** Wraps anything thrown that is not a GatewayError as an internal error, keeping no detail for the client. */
export function asGatewayError(thrown: unknown): GatewayError {
  if (thrown instanceof GatewayError) return thrown;
  return new GatewayError(
    "internal",
    "The gateway failed while handling this request; it has been logged. Retry, and report the x-request-id if it persists.",
  );
}

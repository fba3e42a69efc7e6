// The gateway's one error family: every failure a client can see is a GatewayError of a kind
// from the table below, rendered at the edge in the protocol the client spoke: an HTTP answer
// (`errorResponse`, OpenAI or Anthropic shape) or a Responses WebSocket frame (`errorFrame`).

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
  /** Whether another attempt (this channel again or the next) may succeed: the one place the failover loop asks. */
  retryable: boolean;
}

/** The exhaustive table of error kinds: status, wire types, default code, log level, retryability. */
const KINDS = {
  invalid_request: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: null,
    level: "debug",
    retryable: false,
  },
  model_not_found: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "model_not_found",
    level: "debug",
    retryable: false,
  },
  misplaced_field: {
    status: 400,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "upstream_error",
    level: "debug",
    retryable: false,
  },
  invalid_api_key: {
    status: 401,
    openaiType: "invalid_request_error",
    anthropicType: "authentication_error",
    code: "invalid_api_key",
    level: "info",
    retryable: false,
  },
  model_not_allowed: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "model_not_allowed",
    level: "info",
    retryable: false,
  },
  forbidden: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "forbidden",
    level: "info",
    retryable: false,
  },
  ip_not_allowed: {
    status: 403,
    openaiType: "permission_error",
    anthropicType: "permission_error",
    code: "ip_not_allowed",
    level: "warn",
    retryable: false,
  },
  not_found: {
    status: 404,
    openaiType: "invalid_request_error",
    anthropicType: "not_found_error",
    code: "unknown_url",
    level: "debug",
    retryable: false,
  },
  method_not_allowed: {
    status: 405,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "method_not_allowed",
    level: "debug",
    retryable: false,
  },
  body_timeout: {
    status: 408,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "request_timeout",
    level: "info",
    retryable: false,
  },
  too_large: {
    status: 413,
    openaiType: "invalid_request_error",
    anthropicType: "request_too_large",
    code: "request_too_large",
    level: "debug",
    retryable: false,
  },
  unsupported_encoding: {
    status: 415,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "unsupported_content_encoding",
    level: "debug",
    retryable: false,
  },
  invalid_value: {
    status: 422,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "invalid_value",
    level: "debug",
    retryable: false,
  },
  // nginx's 499: the client closed the connection before the answer; nobody reads this response.
  client_closed: {
    status: 499,
    openaiType: "invalid_request_error",
    anthropicType: "invalid_request_error",
    code: "client_closed_request",
    level: "debug",
    retryable: false,
  },
  rate_limited: {
    status: 429,
    openaiType: "requests",
    anthropicType: "rate_limit_error",
    code: "rate_limit_exceeded",
    level: "info",
    retryable: true,
  },
  quota_exceeded: {
    status: 429,
    openaiType: "insufficient_quota",
    anthropicType: "rate_limit_error",
    code: "insufficient_quota",
    level: "info",
    retryable: false,
  },
  internal: {
    status: 500,
    openaiType: "server_error",
    anthropicType: "api_error",
    code: null,
    level: "error",
    retryable: false,
  },
  upstream_failed: {
    status: 502,
    openaiType: "server_error",
    anthropicType: "api_error",
    code: "upstream_failed",
    level: "warn",
    retryable: true,
  },
  model_not_served: {
    // A permanent state of the gateway's configuration, not an outage: nothing to retry.
    status: 404,
    openaiType: "invalid_request_error",
    anthropicType: "not_found_error",
    code: "model_not_served",
    level: "warn",
    retryable: false,
  },
  no_channel: {
    status: 503,
    openaiType: "server_error",
    anthropicType: "overloaded_error",
    code: "no_healthy_channel",
    level: "warn",
    retryable: false,
  },
  limiter_unavailable: {
    status: 503,
    openaiType: "server_error",
    anthropicType: "overloaded_error",
    code: "limiter_unavailable",
    level: "error",
    retryable: false,
  },
  upstream_timeout: {
    status: 504,
    openaiType: "server_error",
    anthropicType: "timeout_error",
    code: "upstream_timeout",
    level: "warn",
    retryable: true,
  },
} as const satisfies Record<string, KindInfo>;

export type ErrorKind = keyof typeof KINDS;

/**
 * One upstream attempt that failed, as a request's failure carries it (the failover loop,
 * src/upstream/retry.ts, records each): shown in the client's message, the access-log line and the
 * request's span.
 */
export interface FailedAttempt {
  /** The channel's name and upstream kind (`openai-chat`, `sim`, …). */
  channel: string;
  upstream: string;
  /** The upstream's HTTP status, when it answered one. */
  status: number | undefined;
  /** The error kind the attempt's failure was given, and its message. */
  kind: ErrorKind;
  message: string;
  /** When the attempt ended (ISO time), and how long it took. */
  at: string;
  ms: number;
}

export interface GatewayErrorOptions {
  /** The request field at fault, as a dotted path (`messages[0].content`). */
  param?: string | null;
  /** Overrides the kind's default `code` (e.g. `daily_quota_exceeded` on a quota error). */
  code?: string;
  /** Seconds the client should wait before retrying (429, 503). */
  retryAfterSeconds?: number;
  /** Extra headers the response must carry (e.g. `Allow` on 405). */
  headers?: Record<string, string>;
  /** What caused it (kept for logs and traces, never shown to the client). */
  cause?: unknown;
  /** The upstream attempts that failed before it, this one's included (a failover's end). */
  attempts?: readonly FailedAttempt[];
}

/** A failure the client sees: message says what was wrong and how to fix it. */
export class GatewayError extends Error {
  readonly kind: ErrorKind;
  readonly param: string | null;
  readonly code: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Record<string, string> | undefined;
  /** Every upstream attempt of the request, in order, when the error ends a failover (else empty). */
  readonly attempts: readonly FailedAttempt[];

  constructor(kind: ErrorKind, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "GatewayError";
    this.kind = kind;
    this.param = options.param ?? null;
    this.code = options.code ?? KINDS[kind].code;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers;
    this.attempts = options.attempts ?? [];
  }

  get status(): number {
    return KINDS[this.kind].status;
  }

  get level(): Level {
    return KINDS[this.kind].level;
  }

  get retryable(): boolean {
    return KINDS[this.kind].retryable;
  }

  /** The same error with `headers` added to the ones it carries (e.g. the admission's limit headers). */
  withHeaders(headers: Record<string, string>): GatewayError {
    return new GatewayError(this.kind, this.message, {
      param: this.param,
      ...(this.code === null ? {} : { code: this.code }),
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      headers: { ...this.headers, ...headers },
      cause: this.cause,
      attempts: this.attempts,
    });
  }

  /**
   * The error that ends a failover: this one (the last attempt's: its kind, status and code, as the
   * client got them before), carrying every attempt; with more than one, its message names them all.
   */
  withAttempts(attempts: readonly FailedAttempt[]): GatewayError {
    const message =
      attempts.length > 1
        ? `${this.message} All ${attempts.length} attempts failed: ${attempts.map(describeAttempt).join("; ")}.`
        : this.message;
    return new GatewayError(this.kind, message, {
      param: this.param,
      ...(this.code === null ? {} : { code: this.code }),
      ...(this.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: this.retryAfterSeconds }),
      ...(this.headers === undefined ? {} : { headers: this.headers }),
      cause: this.cause,
      attempts,
    });
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

/** One attempt in a message: `1. channel "a" (openai-chat) 500 upstream_failed at <time>: <message>`. */
export function describeAttempt(attempt: FailedAttempt, index: number): string {
  const status = attempt.status === undefined ? "" : ` ${attempt.status}`;
  return `${index + 1}. channel "${attempt.channel}" (${attempt.upstream})${status} ${attempt.kind} at ${attempt.at} after ${attempt.ms} ms: ${attempt.message}`;
}

/** Renders an error as an HTTP response in the client's protocol, with retry headers where due. */
export function errorResponse(error: GatewayError, protocol: ErrorProtocol, requestId: string): Response {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-request-id": requestId,
    ...error.headers,
  };
  // Every 429 says when to retry (an upstream's 429 may not have said): 1 s unless told otherwise.
  const wait = error.retryAfterSeconds ?? (error.status === 429 ? 1 : undefined);
  if (wait !== undefined) {
    headers["retry-after"] = String(Math.max(1, Math.ceil(wait)));
    headers["retry-after-ms"] = String(Math.round(wait * 1000));
  }
  const body = protocol === "anthropic" ? error.toAnthropic(requestId) : error.toOpenAI();
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/** The Responses WebSocket error frame: `{type:"error", status, error:{type, code, message, param}}`. */
export function errorFrame(error: GatewayError): {
  type: "error";
  status: number;
  error: ReturnType<GatewayError["toOpenAI"]>["error"];
} {
  return { type: "error", status: error.status, error: error.toOpenAI().error };
}

/** Wraps anything thrown that is not a GatewayError as an internal error, keeping no detail for the client. */
export function asGatewayError(thrown: unknown): GatewayError {
  if (thrown instanceof GatewayError) return thrown;
  return new GatewayError(
    "internal",
    "The gateway failed while handling this request; it has been logged. Retry, and report the x-request-id if it persists.",
    { cause: thrown },
  );
}

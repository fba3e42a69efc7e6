// Answers for paths and methods the route table does not serve: 404 with a base-URL hint, 405 with Allow.
import { GatewayError } from "../wire/errors.ts";

const API_PATHS = [
  "/responses",
  "/chat/completions",
  "/messages",
  "/images/",
  "/models",
  "/embeddings",
  "/completions",
];

/**
 * The 404 for an unknown path, explaining the `/v1` base-URL rule when that is the likely mistake;
 * `base` is this gateway's address as the client reached it (`http://host:port`).
 */
export function notFoundError(method: string, pathname: string, base: string): GatewayError {
  if (pathname.startsWith("/v1/v1/")) {
    const fixed = pathname.slice(3);
    return new GatewayError(
      "not_found",
      `Unknown path ${pathname}: it has /v1 twice. Your base URL probably already ends in /v1 and the client adds another. Use ${base}/v1 for SDK clients (the path becomes ${fixed}), or ${base} without /v1 for command-line clients that add /v1 themselves.`,
    );
  }
  if (!pathname.startsWith("/v1/") && API_PATHS.some((p) => pathname === p || pathname.startsWith(p))) {
    return new GatewayError(
      "not_found",
      `Unknown path ${pathname}: API paths start with /v1 (this one is /v1${pathname}). Set your client's base URL to ${base}/v1; command-line coding clients configured by environment variable take ${base} without /v1.`,
    );
  }
  return new GatewayError(
    "not_found",
    `Unknown path ${method} ${pathname}. This gateway serves /v1/responses, /v1/chat/completions, /v1/messages, /v1/images/generations, /v1/images/edits and /v1/models.`,
  );
}

export function methodNotAllowedError(
  method: string,
  pathname: string,
  allowed: readonly string[],
): GatewayError {
  return new GatewayError(
    "method_not_allowed",
    `Method ${method} is not allowed on ${pathname}; use ${allowed.join(" or ")}.`,
    { headers: { allow: allowed.join(", ") } },
  );
}

/** Messages-protocol paths answer errors in the Anthropic shape. */
export function protocolOfPath(pathname: string): "openai" | "anthropic" {
  return pathname.includes("/messages") ? "anthropic" : "openai";
}

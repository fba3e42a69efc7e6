// The Anthropic Messages upstream (channel kind "anthropic"): `POST {base_url}/v1/messages` (or
// `/messages` when the base URL already ends in /v1) with `x-api-key`, the client's
// `anthropic-version` (default 2023-06-01) and `anthropic-beta` passed on.
import { type HttpChannelConfig, postText } from "../post-text.ts";
import type { TextCall } from "../text-call.ts";

export function sendMessages(config: HttpChannelConfig, call: TextCall): Promise<Response> {
  const path = config.base_url.replace(/\/+$/, "").endsWith("/v1") ? "/messages" : "/v1/messages";
  return postText(config, path, anthropicHeaders(call), call);
}

function anthropicHeaders(call: TextCall): Record<string, string> {
  const headers: Record<string, string> = { "anthropic-version": call.anthropicVersion ?? "2023-06-01" };
  if (call.credential !== undefined) headers["x-api-key"] = call.credential.expose();
  if (call.anthropicBeta) headers["anthropic-beta"] = call.anthropicBeta;
  return headers;
}

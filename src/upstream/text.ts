// Upstream adapters for the text endpoints, behind one exhaustive dispatch over channel kinds:
// OpenAI Responses, OpenAI Chat Completions (also OpenAI-compatible servers), Anthropic Messages,
// and the simulator in-process. Each adapter sends a body already in its protocol and returns the
// upstream's raw Response; relaying happens in src/pipeline/relay, error mapping in text-errors.ts.

import type { RoutingConfig } from "../config/channels.ts";
import type { Timing } from "../sim/text/pace.ts";
import { TEXT_PATHS, type TextProtocol } from "../wire/text-view.ts";
import type { Channel } from "./channels.ts";
import { applyDialect } from "./dialects.ts";
import { joinUrl, postUpstream } from "./http.ts";
import { simChannelText } from "./sim-channel.ts";

export interface TextCall {
  protocol: TextProtocol;
  /** The request body in `protocol`, model id already mapped. */
  body: string | Uint8Array;
  /** `body` as the object it was made from or parsed into (read, never changed): spares a parse. */
  json?: Readonly<Record<string, unknown>> | undefined;
  stream: boolean;
  /** Messages only: the client's version and beta headers, passed on. */
  anthropicVersion?: string | undefined;
  anthropicBeta?: string | undefined;
  /** Aborts the upstream call (client gone, timeout). */
  signal: AbortSignal;
  /** Aborts `signal` with a reason (the attempt's guard); lets the connect probe fail the call. */
  abort?: ((reason: Error) => void) | undefined;
  /** The channel credential for this attempt (set by the failover loop; rotates per call). */
  credential?: string | undefined;
  /** W3C trace-context headers for this attempt (`traceparent`, `tracestate`). */
  traceHeaders?: Readonly<Record<string, string>> | undefined;
}

export interface UpstreamEnv {
  simSeed: number;
  simTiming: Timing;
  /** Default first-byte timeout for channels that set none. */
  timeoutMs: number;
  /** Retry and failover policy. */
  routing: RoutingConfig;
}

/** Sends one text call to a channel and returns the upstream's response (any status). */
export function callText(channel: Channel, call: TextCall, env: UpstreamEnv): Promise<Response> {
  const config = channel.config;
  switch (config.kind) {
    case "sim": {
      // In-process: the same handler `modelgate sim` serves, without a socket.
      const request = new Request(`http://sim.internal${TEXT_PATHS[call.protocol]}`, {
        method: "POST",
        body: call.body,
        signal: call.signal,
      });
      return simChannelText(channel, call.protocol, request, { seed: env.simSeed, timing: env.simTiming });
    }
    case "openai-responses":
      return post(channel, "/responses", openaiHeaders(call.credential), call);
    case "openai-chat": {
      // The server's dialect is the last change a body gets (src/upstream/dialects.ts).
      const body = applyDialect(channel.quirks, call.body, call.json);
      return post(channel, "/chat/completions", openaiHeaders(call.credential), { ...call, body });
    }
    case "anthropic": {
      const path = config.base_url.replace(/\/+$/, "").endsWith("/v1") ? "/messages" : "/v1/messages";
      return post(channel, path, anthropicHeaders(call.credential, call), call);
    }
    case "openai-images":
      throw new Error(`channel ${config.name} serves images, not text`);
    default: {
      const never: never = config;
      throw new Error(`unknown channel kind ${String(never)}`);
    }
  }
}

function post(
  channel: Channel,
  path: string,
  auth: Record<string, string>,
  call: TextCall,
): Promise<Response> {
  const config = channel.config;
  if (config.kind === "sim") throw new Error(`channel ${config.name} is in-process`);
  return postUpstream({
    channel: config.name,
    url: joinUrl(config.base_url, path),
    headers: {
      "content-type": "application/json",
      accept: call.stream ? "text/event-stream" : "application/json",
      ...auth,
      ...call.traceHeaders,
    },
    body: call.body,
    signal: call.signal,
    abort: call.abort,
    connectMs: config.timeouts.connect_ms,
  });
}

function openaiHeaders(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

function anthropicHeaders(key: string | undefined, call: TextCall): Record<string, string> {
  const headers: Record<string, string> = { "anthropic-version": call.anthropicVersion ?? "2023-06-01" };
  if (key !== undefined) headers["x-api-key"] = key;
  if (call.anthropicBeta) headers["anthropic-beta"] = call.anthropicBeta;
  return headers;
}

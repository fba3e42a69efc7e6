// What a text attempt hands an upstream adapter (the call, in the channel's protocol) and the
// settings every adapter reads (simulator seed and timing, default timeout, routing policy).

import type { Secret } from "../base/types.ts";
import type { RoutingConfig } from "../config/channels.ts";
import type { Timing } from "../sim/text/pace.ts";
import type { TextProtocol } from "../wire/text-form.ts";

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
  credential?: Secret | undefined;
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

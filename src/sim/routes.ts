// The shape of a simulator route and the options every route sees: the protocol modules (text,
// images) each contribute theirs, and src/sim/server.ts serves them all.
import type { FaultProfile } from "../config/channels.ts";
import type { ErrorProtocol } from "../wire/errors.ts";
import type { Timing } from "./text/pace.ts";

export interface SimServerOptions {
  hostname: string;
  port: number;
  seed: number;
  /** The fault profile (default: no faults). */
  profile?: FaultProfile | undefined;
  /** Set per call from the profile: timing and stream cut for answers without directives. */
  timing?: Timing | undefined;
  dropAfter?: number | undefined;
}

/** A route of the simulator: protocol modules (text, images) each contribute theirs. */
export interface SimRoute {
  method: "GET" | "POST";
  path: string;
  /** The shape of the errors a fault injects (default: OpenAI's). */
  errorShape?: ErrorProtocol;
  handle(request: Request, options: SimServerOptions): Response | Promise<Response>;
}

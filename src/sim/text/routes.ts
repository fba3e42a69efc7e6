// The simulator's text endpoints (one per protocol record, src/protocols/): decode the request
// like the real API, plan a deterministic answer, and render it in the protocol's JSON or paced
// SSE (the record's `sim` renderers). Used over HTTP (`modelgate sim`) and in-process by the
// `sim` channel kind.
// Test directives (errors, drops, timing) are described in directives.ts; the tool-call rule in plan.ts.
import { countPromptTokens } from "../../catalog/token-thread.ts";
import type { SimRendered } from "../../protocols/adapter.ts";
import { ALL_PROTOCOLS, protocolOf } from "../../protocols/index.ts";
import { GatewayError } from "../../wire/errors.ts";
import { SSE_HEADERS } from "../../wire/sse.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import type { SimRoute } from "../routes.ts";
import { simError } from "./errors.ts";
import { brokenBody, pacedStream, type Timing } from "./pace.ts";
import { planAnswer } from "./plan.ts";

export interface SimTextOptions {
  seed: number;
  /** Defaults for requests without `sim:ttft` / `sim:tps` directives. */
  timing?: Timing | undefined;
  /** Default for requests without a `sim:drop` directive (a fault profile's disconnect_after_events). */
  dropAfter?: number | undefined;
}

/** Answers one simulated text request in `protocol`. */
export async function simTextAnswer(
  protocol: TextProtocol,
  request: Request,
  options: SimTextOptions,
): Promise<Response> {
  const record = protocolOf(protocol);
  let rendered: SimRendered;
  try {
    const now = Math.floor(Date.now() / 1000);
    rendered = record.sim.render(JSON.parse(await request.text()), request.headers, now);
  } catch (thrown) {
    const message =
      thrown instanceof GatewayError ? thrown.message : `malformed JSON body: ${String(thrown)}`;
    const status = thrown instanceof GatewayError ? thrown.status : 400;
    return simError(record.errorShape, status, `simulator: ${message}`);
  }
  const plan = planAnswer(rendered.view, options.seed, await countPromptTokens(rendered.view.promptText));
  const d = plan.directives;
  if (d.errorStatus !== undefined) {
    return simError(
      record.errorShape,
      d.errorStatus,
      `simulator: error ${d.errorStatus} requested by sim:error`,
    );
  }
  const dropAfter = d.dropAfter ?? options.dropAfter;
  const timing: Timing = {
    ttftMs: d.ttftMs ?? options.timing?.ttftMs ?? 0,
    tokensPerSecond: d.tokensPerSecond ?? options.timing?.tokensPerSecond ?? 0,
  };
  if (!rendered.view.stream) {
    const json = JSON.stringify(rendered.json(plan));
    if (timing.ttftMs > 0) await Bun.sleep(timing.ttftMs);
    const body = dropAfter === undefined ? json : brokenBody(json);
    return new Response(body, { headers: { "content-type": "application/json" } });
  }
  return new Response(pacedStream(rendered.events(plan), timing, dropAfter), { headers: SSE_HEADERS });
}

/** The simulator HTTP routes of the text endpoints: one per protocol record. */
export const SIM_TEXT_ROUTES: readonly SimRoute[] = ALL_PROTOCOLS.map((record) => ({
  method: "POST",
  path: record.path,
  errorShape: record.errorShape,
  handle: (r, o) => simTextAnswer(record.name, r, o),
}));

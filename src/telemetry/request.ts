// The text request's trace hooks, kept here so the request path gains one line per stage: the
// request's GenAI attributes and the caller's key and account, the admission span, and the
// settlement span (which holds the request span open until a stream's usage is settled).
import type { Principal } from "../auth/keys.ts";
import type { Admission, Settlement } from "../billing/contract.ts";
import { asGatewayError } from "../wire/errors.ts";
import type { TextProtocol, TextView } from "../wire/text-form.ts";
import { finishReasons, requestAttributes, responseModel, setAll, usageAttributes } from "./attributes.ts";
import type { RequestTrace } from "./span.ts";

/** Names the request on its span: operation, model, output cap, key and account (never the secret). */
export function describeRequest(trace: RequestTrace | undefined, view: TextView, principal: Principal): void {
  if (trace === undefined) return;
  setAll(trace, requestAttributes(view, trace.captureContent));
  trace.set("modelgate.key.name", principal.keyName || principal.keyId);
  trace.set("modelgate.account.id", principal.accountId);
  trace.set("modelgate.account.name", principal.accountName);
}

/** Runs `admit` inside an `admission` span (failed with the refusal's kind when refused). */
export function tracedAdmission(
  trace: RequestTrace | undefined,
  admit: () => Promise<Admission>,
): Promise<Admission> {
  // Untraced: the admission's own promise, no extra async frame.
  return trace === undefined ? admit() : admitInSpan(trace, admit);
}

async function admitInSpan(trace: RequestTrace, admit: () => Promise<Admission>): Promise<Admission> {
  const span = trace.child("admission");
  try {
    return await admit();
  } catch (thrown) {
    const error = asGatewayError(thrown);
    span.set("modelgate.refusal", error.code ?? error.kind);
    span.fail(error.kind, error.message);
    throw thrown;
  } finally {
    span.end();
  }
}

/**
 * Wraps a settle function in a `settlement` span with the usage on it (and on the request span);
 * the request span stays open until the settlement ran.
 */
export function tracedSettle<R>(
  trace: RequestTrace | undefined,
  settle: (result: Settlement) => Promise<R>,
): (result: Settlement) => Promise<R> {
  if (trace === undefined) return settle;
  const release = trace.hold();
  return async (result) => {
    const span = trace.child("settlement");
    const usage = usageAttributes(result.usage);
    setAll(span, usage);
    setAll(trace, usage);
    span.set("modelgate.channels", result.channels);
    try {
      return await settle(result);
    } finally {
      span.end();
      release();
    }
  };
}

/** A complete answer's model and finish reasons (`gen_ai.response.*`), from its parsed JSON. */
export function describeAnswer(trace: RequestTrace | undefined, protocol: TextProtocol, json: unknown): void {
  if (trace === undefined) return;
  trace.set("gen_ai.response.model", responseModel(json));
  trace.set("gen_ai.response.finish_reasons", finishReasons(protocol, json));
}

// What every endpoint's run hands the billing layer to admit a request (AdmitInput): the request's
// own facts (its ids, method, client address) from its context, the rest from the run — so no
// run can forget one, and each run names only what is its own (model, stream, worst case).
import type { AdmitInput } from "../billing/contract.ts";
import type { RequestContext } from "../http/context.ts";

/** The fields a run decides; the rest come from the request's context. */
export type AdmitFacts = Omit<AdmitInput, "requestId" | "clientRequestId" | "method" | "clientAddress">;

/** The admission of the request `ctx` holds, with what the run knows of it. */
export function admitInput(ctx: RequestContext, facts: AdmitFacts): AdmitInput {
  return {
    requestId: ctx.requestId,
    clientRequestId: ctx.clientRequestId,
    method: ctx.request.method,
    clientAddress: ctx.client?.toString(),
    ...facts,
  };
}

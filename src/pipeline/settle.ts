// The settle stage: the one guard that makes a request's code settle its admission exactly once,
// whichever path ends it (answer complete, upstream error, client gone, exception), traced.
import type { Admission, Settlement } from "../billing/meter.ts";
import { tracedSettle } from "../telemetry/request.ts";
import type { RequestTrace } from "../telemetry/span.ts";

export type Settle = (result: Settlement) => Promise<void>;

/** Guards the admission so this request's code settles it exactly once, whichever path ends it. */
export function settleOnce(admission: Admission, trace: RequestTrace | undefined): Settle {
  let done = false;
  const settle = tracedSettle(trace, (result) => admission.settle(result));
  return async (result) => {
    if (done) return;
    done = true;
    await settle(result);
  };
}

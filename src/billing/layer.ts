// Billing as a layer: the one entry the request pipelines (text and images) call. It admits the
// request (limits, worst-case reservation), runs the inner work (route → call → relay), and settles
// the admission exactly once when the work's outcome resolves: a thrown error settles as a failure
// with the channels tried (and the error carries the x-ratelimit headers); a complete answer is
// settled before it is returned; an answer that goes on after it is returned (a stream) is settled
// when it reports its end, and its end waits for the record to be durable. Every answer carries
// the admission's x-ratelimit headers, and its settled cost (src/wire/cost.ts): a complete answer or
// an error in a header, a stream in its last line (the relay writes what the layer answers it).
// Admission and settlement are traced (src/telemetry/request.ts).
import { clientLeft } from "../base/client.ts";
import type { Handoff } from "../base/handoff.ts";
import type { Nanos } from "../base/types.ts";
import { tracedAdmission, tracedSettle } from "../telemetry/request.ts";
import type { RequestTrace } from "../telemetry/span.ts";
import { COST_HEADER, costText } from "../wire/cost.ts";
import { asGatewayError, GatewayError } from "../wire/errors.ts";
import { type AdmitInput, type Meter, NO_USAGE, type Settlement } from "./contract.ts";

export { NO_AUDIO, NO_USAGE } from "./contract.ts";

/** What an answer reports when it ended: its settlement, less the channels (the layer keeps those). */
export type Ending = Omit<Settlement, "channels">;

export type MeteredAnswer =
  /**
   * Complete when returned (a JSON answer): settled before the layer returns it; `settled` hears
   * the settled cost (the response cache keeps the answer with it).
   */
  | { response: Response; complete: Ending; settled?: ((cost: Nanos) => void) | undefined }
  /** Goes on after it is returned (a stream): settled when it sends its end; answered with the cost. */
  | { response: Response; ended: Handoff<Ending, Nanos> };

/**
 * The inner work of a metered request. `channels` collects the names of the channels it calls, in
 * order (one entry per attempt), for the settlement.
 */
export type MeteredWork = (channels: string[]) => Promise<MeteredAnswer>;

/** The settlement of a request whose work threw with `status`; the default bills nothing. */
export type FailedEnding = (status: number) => Ending;

const NOTHING_BILLED: FailedEnding = (status) => ({ status, usage: NO_USAGE, source: "none" });

/** The status a request is settled with when its client's connection closed before the answer. */
const CLIENT_CLOSED_STATUS = 499;

function clientGone(): GatewayError {
  return new GatewayError("client_closed", "The client closed the connection before the answer.");
}

/**
 * Admits `input` (throws the 429 when refused), runs `work`, settles exactly once whichever way it
 * ends, and returns its response with the x-ratelimit headers. `failed` gives the settlement of a
 * work that threw (an image request bills the images it already got). `client` is the client's
 * connection (its request's abort signal): a request whose connection has closed is not admitted
 * (src/base/client.ts), and an answer ready after it closed is settled unbilled (499) and
 * dropped — it can no longer be written, so it is not billed.
 */
export async function metered(
  meter: Meter,
  input: AdmitInput,
  trace: RequestTrace | undefined,
  work: MeteredWork,
  failed: FailedEnding = NOTHING_BILLED,
  client?: AbortSignal,
): Promise<Response> {
  if (client !== undefined && (await clientLeft(client))) throw clientGone();
  const admission = await tracedAdmission(trace, () => meter.admit(input));
  // The first call wins, whichever path ends the request.
  let settled: Promise<Nanos> | undefined;
  const record = tracedSettle(trace, (result) => admission.settle(result));
  const channels: string[] = [];
  const settle = (ending: Ending): Promise<Nanos> => {
    settled ??= record({ ...ending, channels });
    return settled;
  };
  let response: Response;
  try {
    const answer = await work(channels);
    // Settled first, this wins over the answer's own ending (which then records nothing).
    const gone = client?.aborted === true;
    if (gone) await settle(NOTHING_BILLED(CLIENT_CLOSED_STATUS));
    if ("complete" in answer) {
      const cost = await settle(answer.complete);
      answer.response.headers.set(COST_HEADER, costText(cost));
      // An answer the client never got is not kept for the response cache.
      if (!gone) answer.settled?.(cost);
    } else {
      const { ended } = answer;
      ended.received.then((ending) => ended.answer(settle(ending)));
    }
    if (gone) {
      answer.response.body?.cancel().catch(() => undefined);
      throw clientGone();
    }
    response = answer.response;
  } catch (thrown) {
    const error = asGatewayError(thrown);
    const cost = await settle(failed(error.status));
    const headers = {
      ...(error.headers === undefined ? admission.headers : {}),
      [COST_HEADER]: costText(cost),
    };
    throw error.withHeaders(headers);
  }
  const rate = admission.headers;
  for (const name in rate) response.headers.set(name, rate[name] as string);
  return response;
}

// A cluster worker's Meter: every admission, settlement and balance question is a call to the
// primary, whose one LedgerMeter decides it, so limits and money stay exact across processes.
// A refusal comes back as the primary's GatewayError, rebuilt (same message, code and headers);
// settle() resolves only when the primary reports the usage record durable, as a local meter does.

import { nanos } from "../base/money.ts";
import type { Nanos } from "../base/types.ts";
import type {
  Admission,
  AdmitInput,
  BalanceView,
  Meter,
  MeteredKey,
  Settlement,
} from "../billing/contract.ts";
import type { PrimaryLink } from "./link.ts";
import { fromWireError, meteredKey, type Reply, toWireAdmit } from "./protocol.ts";

/** How long close() waits for replies to calls already sent. */
const CLOSE_WAIT_MS = 10_000;

function unexpected(call: string, reply: Reply): Error {
  return new Error(`cluster primary answered ${call} with "${reply.t}"`);
}

export class RemoteMeter implements Meter {
  readonly #link: PrimaryLink;

  constructor(link: PrimaryLink) {
    this.#link = link;
  }

  async admit(input: AdmitInput): Promise<Admission> {
    const reply = await this.#link.call((id) => ({ t: "admit", id, input: toWireAdmit(input) }));
    if (reply.t === "refused") throw fromWireError(reply.error);
    if (reply.t !== "admitted") throw unexpected("admit", reply);
    const { ticket, headers } = reply;
    let settled: Promise<Nanos> | undefined;
    return {
      headers,
      settle: (result: Settlement) => {
        settled ??= this.#settle(ticket, result);
        return settled;
      },
    };
  }

  async #settle(ticket: number, result: Settlement): Promise<Nanos> {
    const reply = await this.#link.call((id) => ({ t: "settle", id, ticket, result }));
    if (reply.t !== "done") throw unexpected("settle", reply);
    return nanos(reply.costNanos ?? 0);
  }

  async balance(principal: MeteredKey): Promise<BalanceView> {
    const reply = await this.#link.call((id) => ({ t: "balance", id, key: meteredKey(principal) }));
    if (reply.t !== "balance") throw unexpected("balance", reply);
    return reply.view;
  }

  /** Has the primary put every settled record in the store (before the admin API reads usage). */
  async flush(): Promise<void> {
    const reply = await this.#link.call((id) => ({ t: "flush", id }));
    if (reply.t !== "done") throw unexpected("flush", reply);
  }

  /** Waits for the replies of settlements already sent (the primary commits them). */
  async close(): Promise<void> {
    await this.#link.idle(CLOSE_WAIT_MS);
  }
}

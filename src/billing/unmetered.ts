// Interim meter until the billing issue lands: admits every request and publishes each settled
// request to the live feed at zero cost. Replaced by the real meter (limits, reservation, ledger).
import type { UsageFeed } from "./feed.ts";
import type { Admission, AdmitInput, Meter, Settlement } from "./meter.ts";

export class UnmeteredMeter implements Meter {
  readonly #feed: UsageFeed;

  constructor(feed: UsageFeed) {
    this.#feed = feed;
  }

  async admit(input: AdmitInput): Promise<Admission> {
    const startedAt = performance.now();
    let settled = false;
    const feed = this.#feed;
    return {
      headers: {},
      async settle(result: Settlement) {
        if (settled) return;
        settled = true;
        feed.publish({
          requestId: input.requestId,
          at: Date.now(),
          method: input.method,
          endpoint: input.endpoint,
          keyId: input.principal.keyId,
          keyName: input.principal.keyName,
          accountId: input.principal.accountId,
          model: input.model.id,
          stream: input.stream,
          status: result.status,
          ...result.usage,
          costNanos: 0,
          usageSource: result.source,
          latencyMs: Math.round(performance.now() - startedAt),
          ttfbMs: result.ttfbMs ?? null,
          channels: result.channels,
          clientAddress: input.clientAddress ?? null,
        });
      },
    };
  }
}

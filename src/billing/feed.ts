// The live feed of requests: settled ones (published by the meter) and the API requests that were
// never billed, refusals included (published by the access log, src/http/access-log.ts). The admin
// event stream, the terminal UI's log and the notifications subscribe here. Publishing never
// waits for a subscriber.

export interface UsageEvent {
  requestId: string;
  at: number;
  method: string;
  endpoint: string;
  keyId: string;
  keyName: string;
  accountId: number;
  model: string;
  stream: boolean;
  status: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  generations: number;
  costNanos: number;
  usageSource: "reported" | "estimated" | "none";
  latencyMs: number;
  ttfbMs: number | null;
  channels: string[];
  clientAddress: string | null;
  /** The error code of a request refused before billing (`invalid_api_key`, `rate_limit_exceeded`, …). */
  errorCode?: string | null;
  /**
   * Set on a request that never reached billing (published by the access log): subscribers that
   * count settlements, tokens or money skip it.
   */
  unbilled?: true;
}

type Listener = (event: UsageEvent) => void;

export class UsageFeed {
  readonly #listeners = new Set<Listener>();

  /** Adds a listener; returns the function that removes it. A listener must not block. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(event: UsageEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        // One failing subscriber must not stop the others or the request that published.
        console.error("usage feed subscriber failed:", error);
      }
    }
  }

  get subscribers(): number {
    return this.#listeners.size;
  }
}

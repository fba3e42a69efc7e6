// The live feed of requests: settled ones (published by the meter) and the API requests that were
// never billed, refusals included (published by the access log, src/http/access-log.ts). The admin
// event stream, the terminal UI's log and the notifications subscribe here. Publishing never
// waits for a subscriber. In a cluster, a listener that asks for the whole cluster's events (the
// admin event stream) also receives those other nodes publish (src/limits/redis-feed.ts relays
// them while such a listener exists); the others (notifications) see only this node's.

import type { AccountId, KeyId, ModelId } from "../base/types.ts";
import type { UsageSource } from "../store/usage/record.ts";
import type { ToolCalls } from "../wire/usage-counts.ts";

export interface UsageEvent {
  /** The gateway's id of the request. */
  requestId: string;
  /** The id the client sent for it, if any. */
  clientRequestId?: string | null;
  at: number;
  method: string;
  endpoint: string;
  keyId: KeyId;
  keyName: string;
  accountId: AccountId;
  model: ModelId;
  stream: boolean;
  status: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  generations: number;
  /** Hosted tool calls billed per call, by tool; absent when none ran. */
  toolCalls?: ToolCalls | undefined;
  /** Audio billed per minute (speech to text), in milliseconds; absent when none. */
  audioMs?: number | undefined;
  /** Input characters billed per character (speech); absent when none. */
  characters?: number | undefined;
  costNanos: number;
  usageSource: UsageSource;
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

export interface SubscribeOptions {
  /** Also the events other nodes of the cluster publish (the admin event stream). */
  cluster?: boolean;
}

export class UsageFeed {
  readonly #listeners = new Set<Listener>();
  readonly #cluster = new Set<Listener>();
  #onClusterReaders: ((count: number) => void) | undefined;

  /** Adds a listener; returns the function that removes it. A listener must not block. */
  subscribe(listener: Listener, options: SubscribeOptions = {}): () => void {
    this.#listeners.add(listener);
    if (options.cluster) {
      this.#cluster.add(listener);
      this.#onClusterReaders?.(this.#cluster.size);
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#cluster.delete(listener)) this.#onClusterReaders?.(this.#cluster.size);
    };
  }

  /** An event another node published: only the listeners that asked for the cluster's get it. */
  publishRemote(event: UsageEvent): void {
    for (const listener of this.#cluster) deliver(listener, event);
  }

  /** Calls `callback` with the number of cluster listeners whenever it changes (one relay). */
  watchClusterReaders(callback: (count: number) => void): void {
    this.#onClusterReaders = callback;
  }

  publish(event: UsageEvent): void {
    for (const listener of this.#listeners) deliver(listener, event);
  }

  get subscribers(): number {
    return this.#listeners.size;
  }
}

function deliver(listener: Listener, event: UsageEvent): void {
  try {
    listener(event);
  } catch (error) {
    // One failing subscriber must not stop the others or the request that published.
    console.error("usage feed subscriber failed:", error);
  }
}

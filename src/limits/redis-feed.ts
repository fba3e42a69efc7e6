// The cluster's request feed over Redis pub/sub: while this node has a reader of the whole
// cluster's events (GET /admin/v1/events, the TUI), it subscribes to `PREFIX:feed` and hands what
// other nodes publish to its feed; and it publishes its own events only while some other node
// subscribes (PUBSUB NUMSUB, checked every second), so a cluster nobody watches spends nothing
// per request. Best effort: the feed is for watching, the ledger is PostgreSQL; a message lost
// while Redis is down is not replayed. A reader sees other nodes' requests from at most one
// second after it connects.
import { RedisClient } from "bun";
import * as v from "valibot";
import { log } from "../base/log.ts";
import type { UsageEvent, UsageFeed } from "../billing/feed.ts";

const CHECK_MS = 1000;

/** What a node publishes: its id (to skip its own) and the event as the feed carries it. */
const Message = v.object({
  node: v.string(),
  event: v.looseObject({ requestId: v.string(), at: v.number(), keyId: v.string(), status: v.number() }),
});

export class RedisFeedRelay {
  readonly #node = crypto.randomUUID();
  readonly #channel: string;
  readonly #feed: UsageFeed;
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #unsubscribeLocal: () => void;
  #listening = false;
  /** Subscribers of the channel on other nodes, as of the last check. */
  #remoteReaders = 0;

  constructor(feed: UsageFeed, url: string, prefix: string) {
    this.#feed = feed;
    this.#channel = `${prefix}:feed`;
    this.#publisher = new RedisClient(url);
    this.#subscriber = new RedisClient(url);
    this.#unsubscribeLocal = feed.subscribe((event) => this.#publish(event));
    feed.watchClusterReaders((count) => void this.#follow(count > 0));
    this.#timer = setInterval(() => void this.#check(), CHECK_MS);
    this.#timer.unref();
  }

  async #check(): Promise<void> {
    try {
      const reply = await this.#publisher.send("PUBSUB", ["NUMSUB", this.#channel]);
      const count = Array.isArray(reply) ? Number(reply[1] ?? 0) : 0;
      this.#remoteReaders = Math.max(0, count - (this.#listening ? 1 : 0));
    } catch {
      this.#remoteReaders = 0; // Redis away: the limiter reports it; the feed just goes quiet
    }
  }

  #publish(event: UsageEvent): void {
    if (this.#remoteReaders === 0) return;
    this.#publisher
      .publish(this.#channel, JSON.stringify({ node: this.#node, event }))
      .catch(() => undefined);
  }

  #receive(message: string): void {
    let parsed: v.InferOutput<typeof Message>;
    try {
      parsed = v.parse(Message, JSON.parse(message));
    } catch (error) {
      log("warn", "cluster feed: a message that is not a request event was ignored", {
        channel: this.#channel,
        error: error instanceof Error ? error.message : String(error),
      });
      return;
    }
    if (parsed.node === this.#node) return;
    this.#feed.publishRemote(parsed.event as unknown as UsageEvent);
  }

  async #follow(on: boolean): Promise<void> {
    if (on === this.#listening) return;
    this.#listening = on;
    try {
      if (on) await this.#subscriber.subscribe(this.#channel, (message) => this.#receive(message));
      else await this.#subscriber.unsubscribe(this.#channel);
    } catch (error) {
      this.#listening = false;
      log("warn", "cluster feed: cannot follow the other nodes' requests", {
        channel: this.#channel,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#unsubscribeLocal();
    this.#publisher.close();
    this.#subscriber.close();
  }
}

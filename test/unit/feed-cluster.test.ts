// The usage feed in a cluster: events of other nodes reach only the listeners that asked for the
// cluster's (the admin event stream), never the others (notifications, which must count each
// request on the node that served it); the relay is told how many cluster listeners there are.
import { expect, test } from "bun:test";
import { type UsageEvent, UsageFeed } from "../../src/billing/feed.ts";
import { acct, kid, mid } from "../helpers/ids.ts";

function event(requestId: string): UsageEvent {
  return {
    requestId,
    at: 1,
    method: "POST",
    endpoint: "/v1/chat/completions",
    keyId: kid("key_a"),
    keyName: "a",
    accountId: acct(1),
    model: mid("m"),
    stream: false,
    status: 200,
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 1,
    reasoningTokens: 0,
    generations: 0,
    costNanos: 5,
    usageSource: "reported",
    latencyMs: 1,
    ttfbMs: null,
    channels: [],
    clientAddress: null,
  };
}

test("remote events reach cluster listeners only; local events reach both; reader counts are reported", () => {
  const feed = new UsageFeed();
  const counts: number[] = [];
  feed.watchClusterReaders((count) => counts.push(count));
  const local: string[] = [];
  const cluster: string[] = [];
  feed.subscribe((e) => local.push(e.requestId));
  const stop = feed.subscribe((e) => cluster.push(e.requestId), { cluster: true });
  feed.publish(event("here"));
  feed.publishRemote(event("there"));
  expect(local).toEqual(["here"]);
  expect(cluster).toEqual(["here", "there"]);
  stop();
  stop();
  feed.publishRemote(event("later"));
  expect(cluster).toEqual(["here", "there"]);
  expect(counts).toEqual([1, 0]);
});

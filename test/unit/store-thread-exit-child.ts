// Run by usage-batches.test.ts in a process of its own, with
// MODELGATE_TEST_STORE_THREAD_EXIT_AFTER_COMMIT=1 (read by the store thread when it starts): a
// meter without a usage journal, as a second `serve` on a database runs it, commits through a store
// thread that exits after its commit, before replying. Settles one request of the first account
// at the store URL given and prints its request id as JSON.
import * as v from "valibot";
import { UsageFeed } from "../../src/billing/feed.ts";
import { LedgerMeter } from "../../src/billing/ledger.ts";
import { StoreThread } from "../../src/billing/store-thread.ts";
import { BillingSchema } from "../../src/config/prices.ts";
import { openStore } from "../../src/store/open.ts";
import { admitInput, principalOf, usage } from "./billing-fixture.ts";

const url = process.argv[2];
if (url === undefined) throw new Error("usage: store-thread-exit-child.ts STORE_URL");
const store = await openStore(url);
const [account] = await store.listAccounts();
if (account === undefined) throw new Error("the store has no account");
// Open before the first commit, so the batch goes to the thread rather than the main thread.
const thread = await StoreThread.open(url);
const meter = new LedgerMeter({
  store,
  feed: new UsageFeed(),
  billing: v.parse(BillingSchema, {}),
  pollMs: 0,
  thread,
});
await meter.start();
const input = admitInput(principalOf(account), "modelx-5.4-mini", {
  kind: "text",
  inputTokens: 1000,
  maxOutputTokens: 1000,
});
const admission = await meter.admit(input);
await admission.settle({
  status: 200,
  usage: usage({ inputTokens: 1000, outputTokens: 1000 }),
  source: "reported",
  channels: ["sim"],
});
await meter.close();
await store.close();
console.log(JSON.stringify({ requestId: input.requestId }));

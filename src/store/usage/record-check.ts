// The check of a usage record read back from the usage journal: lines another version of the gateway
// wrote, or a hand-edited file, are read before their records reach the store, so one line that is
// not a record sets that line aside instead of failing every replay (and so the gateway's start).
import * as v from "valibot";
import { describeIssues } from "../../base/validation.ts";
import { USAGE_COUNTS_FIELDS } from "../../wire/usage-counts.ts";
import type { UsageSource } from "./record.ts";

const finite = v.pipe(v.number(), v.finite());

/**
 * A record's fields as the stores write them (usage/rows.ts): a field the row mapping gives a default
 * may be absent, as in lines an earlier version wrote before the field existed; fields a later
 * version adds pass unread.
 */
const JournalRecord = v.looseObject({
  requestId: v.pipe(v.string(), v.minLength(1)),
  clientRequestId: v.nullish(v.string()),
  keyId: v.pipe(v.string(), v.minLength(1)),
  accountId: finite,
  model: v.pipe(v.string(), v.minLength(1)),
  endpoint: v.string(),
  stream: v.boolean(),
  status: finite,
  ...USAGE_COUNTS_FIELDS,
  cacheWriteTokens: v.optional(finite),
  cacheWrite1hTokens: v.optional(finite),
  costNanos: finite,
  usageSource: v.picklist(["reported", "counted", "estimated", "none"] satisfies UsageSource[]),
  channels: v.array(v.string()),
  latencyMs: finite,
  ttfbMs: v.nullish(finite),
  clientAddress: v.nullish(v.string()),
  endUser: v.nullish(v.string()),
  alias: v.optional(v.string()),
  cacheHit: v.optional(v.boolean()),
  detail: v.nullish(v.record(v.string(), v.unknown())),
  createdAt: finite,
});

/** Why `item` is not a usage record the stores can take; undefined when it is one. */
export function usageRecordProblem(item: unknown): string | undefined {
  const checked = v.safeParse(JournalRecord, item);
  return checked.success ? undefined : describeIssues(checked.issues);
}

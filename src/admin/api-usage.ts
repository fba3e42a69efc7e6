// /admin/v1/usage (aggregates by key, model or day), /admin/v1/requests (recent usage records)
// and /admin/v1/audit (who changed what, when). Read from usage_records and audit_log.
import * as v from "valibot";
import { startOfUtcDay } from "../base/time.ts";
import { toAccountId, toKeyId, toModelId } from "../base/types.ts";
import type { AuditEntry, UsageAggregate } from "../store/admin.ts";
import type { UsageRecord } from "../store/usage/record.ts";
import { adminRoute, intText, readQuery } from "./http.ts";
import { isoTime, usageCounts } from "./view.ts";

const Filters = {
  days: v.optional(intText(1, 366), "30"),
  key: v.optional(v.pipe(v.string(), v.transform(toKeyId))),
  model: v.optional(v.pipe(v.string(), v.transform(toModelId))),
  account: v.optional(v.pipe(intText(1, Number.MAX_SAFE_INTEGER), v.transform(toAccountId))),
};

const UsageQuery = v.strictObject({ by: v.optional(v.picklist(["key", "model", "day"]), "day"), ...Filters });
const RequestsQuery = v.strictObject({ limit: v.optional(intText(1, 1000), "50"), ...Filters });
const AuditQuery = v.strictObject({ limit: v.optional(intText(1, 1000), "100") });

/** The filter of a usage or requests query (`Filters` as read). */
function filterOf(q: v.InferOutput<v.ObjectSchema<typeof Filters, undefined>>) {
  return {
    // `days=1` is today (UTC); `days=30` is today and the 29 days before.
    since: startOfUtcDay() - (q.days - 1) * 86_400_000,
    keyId: q.key,
    model: q.model,
    accountId: q.account,
  };
}

/** One bucket of /usage: a key, a model or a day. */
export function usageView(r: UsageAggregate) {
  return {
    bucket: r.bucket,
    requests: r.requests,
    errors: r.errors,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    generations: r.generations,
    audio_ms: r.audioMs,
    characters: r.characters,
    cost_nanos: r.costNanos,
  };
}

/** A recent request (a usage record) as /requests lists it. */
export function requestView(r: UsageRecord) {
  return {
    request_id: r.requestId,
    client_request_id: r.clientRequestId ?? null,
    key_id: r.keyId,
    account_id: r.accountId,
    model: r.model,
    // The name the client asked for when it was an alias of `model` (`[aliases]`), else null.
    alias: r.alias ?? null,
    endpoint: r.endpoint,
    stream: r.stream,
    status: r.status,
    ...usageCounts(r),
    cost_nanos: r.costNanos,
    // Answered from the response cache (`[cache]`).
    cache_hit: r.cacheHit === true,
    latency_ms: r.latencyMs,
    ttfb_ms: r.ttfbMs,
    created_at: isoTime(r.createdAt),
  };
}

/** An audit log entry: who changed what, when. */
export function auditView(r: AuditEntry) {
  return {
    id: r.id,
    actor: r.actor,
    action: r.action,
    target: r.target,
    detail: r.detail,
    at: isoTime(r.createdAt),
  };
}

export const usage = adminRoute(async ({ ctx, gateway }) => {
  const q = readQuery(ctx, UsageQuery);
  const rows = await gateway.store.admin.usage(q.by, filterOf(q));
  return {
    object: "list",
    by: q.by,
    days: q.days,
    data: rows.map(usageView),
  };
});

export const recentRequests = adminRoute(async ({ ctx, gateway }) => {
  const q = readQuery(ctx, RequestsQuery);
  const rows = await gateway.store.admin.recentRequests(filterOf(q), q.limit);
  return {
    object: "list",
    data: rows.map(requestView),
  };
});

export const auditLog = adminRoute(async ({ ctx, gateway }) => {
  const q = readQuery(ctx, AuditQuery);
  const rows = await gateway.store.admin.listAudit(q.limit);
  return {
    object: "list",
    data: rows.map(auditView),
  };
});

// /admin/v1/notifications: channels (webhook or e-mail, per account or for every account),
// their delivery history, and announcements sent to every subscribed channel.
import { randomBytes } from "node:crypto";
import * as v from "valibot";
import { EVENT_KINDS } from "../notify/payloads.ts";
import type { Delivery, NotificationChannel } from "../store/admin.ts";
import { StoreError } from "../store/store.ts";
import { GatewayError } from "../wire/errors.ts";
import { type AdminCall, adminRoute, intText, readJson, readQuery } from "./http.ts";
import { Name, Usd } from "./schemas.ts";
import { isoTime } from "./view.ts";

const Events = v.optional(
  v.pipe(v.array(v.picklist(EVENT_KINDS, `expected one of ${EVENT_KINDS.join(", ")}`)), v.minLength(1)),
  [...EVENT_KINDS],
);

const Common = {
  /** The account whose events the channel receives; omitted: every account (an operator channel). */
  account: v.optional(Name),
  events: Events,
  balance_threshold_usd: v.optional(v.nullable(Usd), null),
};

const CreateChannel = v.variant("kind", [
  v.strictObject({
    kind: v.literal("webhook"),
    url: v.pipe(
      v.string(),
      v.url("expected an http(s) URL"),
      v.regex(/^https?:\/\//i, "expected an http(s) URL"),
    ),
    /** HMAC key; generated when omitted (and shown in this answer only). */
    secret: v.optional(v.pipe(v.string(), v.minLength(16, "use at least 16 characters"))),
    ...Common,
  }),
  v.strictObject({
    kind: v.literal("email"),
    to: v.pipe(v.string(), v.email("expected an e-mail address")),
    ...Common,
  }),
]);

const Announce = v.strictObject({
  title: v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(200)),
  message: v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(10_000)),
  account: v.optional(Name),
});

const DeliveryQuery = v.strictObject({
  limit: v.optional(intText(1, 1000), "100"),
  channel: v.optional(intText(1, Number.MAX_SAFE_INTEGER)),
});

/** A channel as the admin API shows it (never its secret). */
export function channelView(c: NotificationChannel) {
  return {
    id: c.id,
    account_id: c.accountId,
    kind: c.kind,
    target: c.target,
    events: c.events,
    balance_threshold_nanos: c.balanceThreshold,
    enabled: c.enabled,
    created_at: isoTime(c.createdAt),
  };
}

/** One delivery of a notification to a channel, with its attempts. */
export function deliveryView(d: Delivery) {
  return {
    id: d.id,
    channel_id: d.channelId,
    event: d.event,
    state: d.state,
    attempts: d.attempts,
    last_status: d.lastStatus,
    last_error: d.lastError,
    payload: d.payload,
    created_at: isoTime(d.createdAt),
    updated_at: isoTime(d.updatedAt),
  };
}

async function accountNamed(call: AdminCall, name: string | undefined) {
  if (name === undefined) return null;
  const account = (await call.gateway.store.listAccounts()).find((a) => a.name === name);
  if (!account) throw new StoreError("not_found", `account "${name}" does not exist`);
  return account;
}

export const listChannels = adminRoute(async ({ gateway }) => ({
  object: "list",
  data: (await gateway.store.admin.listChannels()).map(channelView),
}));

export const createChannel = adminRoute(async (call) => {
  const input = await readJson(call.ctx, CreateChannel);
  if (input.kind === "email" && !call.gateway.config.admin.notifications.smtp) {
    throw new GatewayError(
      "invalid_request",
      "kind: e-mail channels need an SMTP server; set [admin.notifications.smtp] in the config first",
      { param: "kind", code: "invalid_field" },
    );
  }
  const account = await accountNamed(call, input.account);
  const secret =
    input.kind === "webhook" ? (input.secret ?? `whsec_${randomBytes(24).toString("base64url")}`) : null;
  const channel = await call.gateway.store.admin.createChannel({
    accountId: account?.id ?? null,
    kind: input.kind,
    target: input.kind === "webhook" ? input.url : input.to,
    secret,
    events: input.events,
    balanceThreshold: input.balance_threshold_usd,
  });
  await call.gateway.store.admin.audit(call.actor, "channel.create", String(channel.id), {
    kind: channel.kind,
    target: channel.target,
    account: input.account ?? null,
    events: channel.events,
  });
  return { ...channelView(channel), ...(secret ? { secret } : {}) };
}, 201);

export const disableChannel = adminRoute(async ({ gateway, actor, params }) => {
  const id = Number(params.id);
  if (!Number.isSafeInteger(id))
    throw new StoreError("not_found", `notification channel ${params.id} does not exist`);
  const channel = await gateway.store.admin.disableChannel(id);
  await gateway.store.admin.audit(actor, "channel.disable", String(id));
  return channelView(channel);
});

export const listDeliveries = adminRoute(async ({ ctx, gateway }) => {
  const q = readQuery(ctx, DeliveryQuery);
  return {
    object: "list",
    data: (await gateway.store.admin.listDeliveries(q.limit, q.channel)).map(deliveryView),
  };
});

export const announce = adminRoute(async (call) => {
  const input = await readJson(call.ctx, Announce);
  const account = await accountNamed(call, input.account);
  const sent = await call.gateway.notifier.announce(input.title, input.message, account);
  await call.gateway.store.admin.audit(call.actor, "announcement.send", input.account ?? "*", {
    title: input.title,
    notification: sent.id,
    deliveries: sent.deliveries.length,
  });
  return { id: sent.id, deliveries: sent.deliveries };
}, 202);

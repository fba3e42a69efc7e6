// The `[admin]` config section: who may reach the admin API, and how notifications are sent.
import * as v from "valibot";
import { Cidr, usdText, wholeNumber } from "./blocks.ts";

const SmtpSchema = v.strictObject({
  host: v.pipe(v.string(), v.minLength(1)),
  port: v.optional(wholeNumber(1, 65535), 587),
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: v.optional(v.boolean(), false),
  from: v.pipe(v.string(), v.email("expected an e-mail address such as gateway@example.com")),
  username: v.optional(v.string()),
  /** Name of the environment variable holding the SMTP password; the value is never logged. */
  password_env: v.optional(
    v.pipe(v.string(), v.regex(/^[A-Z_][A-Z0-9_]*$/, "expected an environment variable name")),
  ),
});

const NotificationsSchema = v.strictObject({
  smtp: v.optional(SmtpSchema),
  /** Attempts per webhook or e-mail delivery before it is recorded as failed. */
  max_attempts: v.optional(wholeNumber(1, 20), 5),
  /** First retry delay; each retry doubles it (plus up to 20% jitter). */
  retry_base_ms: v.optional(wholeNumber(1, 600_000), 1000),
  /** Per-attempt timeout of a webhook POST. */
  timeout_ms: v.optional(wholeNumber(100, 120_000), 10_000),
  /** At most one key security alert per key and reason in this window; the rest are counted. */
  alert_interval_seconds: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(86_400)), 300),
  /** Balance under which `balance.low` fires, for channels that set no threshold of their own. */
  balance_threshold_usd: v.optional(usdText("such as 5 or 2.50"), "1"),
  /** How often balances and daily caps are checked after traffic. */
  check_interval_ms: v.optional(wholeNumber(50, 600_000), 1000),
});

export const AdminConfigSchema = v.strictObject({
  /** Client addresses allowed to call /admin/v1 (with a valid admin token). Loopback by default. */
  allow_from: v.optional(v.array(Cidr), ["127.0.0.0/8", "::1/128"]),
  notifications: v.optional(NotificationsSchema, {}),
});

export type AdminConfig = v.InferOutput<typeof AdminConfigSchema>;
export type NotificationsConfig = AdminConfig["notifications"];

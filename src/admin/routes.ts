// The admin API's routes, mounted under /admin/v1 as an Elysia group of the gateway's app (src/server.ts).
// Every route checks the admin token and the client address (admin.allow_from) first. Each
// handler's module is imported at its first request: `serve` evaluates none of the admin API until
// an operator calls it.
import { loadedOnFirstCall as lazy } from "../base/lazy.ts";
import type { Route } from "../http/edge.ts";

/** Where the admin API is mounted (an Elysia group in src/server.ts). */
export const ADMIN_PREFIX = "/admin/v1";

const accounts = () => import("./api-accounts.ts");
const cache = () => import("./api-cache.ts");
const keys = () => import("./api-keys.ts");
const notify = () => import("./api-notify.ts");
const tokens = () => import("./api-tokens.ts");
const usage = () => import("./api-usage.ts");

export const ADMIN_ROUTES: readonly Route[] = [
  ["GET", "/accounts", lazy(async () => (await accounts()).listAccounts)],
  ["POST", "/accounts", lazy(async () => (await accounts()).createAccount)],
  ["POST", "/accounts/:name/credit", lazy(async () => (await accounts()).creditAccount)],
  ["GET", "/accounts/:name/budgets", lazy(async () => (await accounts()).getAccountBudgets)],
  ["POST", "/accounts/:name/budgets", lazy(async () => (await accounts()).setAccountBudgets)],
  ["GET", "/groups", lazy(async () => (await accounts()).listGroups)],
  ["POST", "/groups/:name", lazy(async () => (await accounts()).setGroup)],
  ["GET", "/keys", lazy(async () => (await keys()).listKeys)],
  ["POST", "/keys", lazy(async () => (await keys()).createKeyRoute)],
  ["GET", "/keys/:id", lazy(async () => (await keys()).getKey)],
  ["POST", "/keys/:id", lazy(async () => (await keys()).updateKey)],
  ["POST", "/keys/:id/revoke", lazy(async () => (await keys()).revokeKey)],
  ["POST", "/keys/:id/enable", lazy(async () => (await keys()).enableKey)],
  ["GET", "/tokens", lazy(async () => (await tokens()).listTokens)],
  ["POST", "/tokens/:id/revoke", lazy(async () => (await tokens()).revokeToken)],
  ["GET", "/usage", lazy(async () => (await usage()).usage)],
  ["GET", "/requests", lazy(async () => (await usage()).recentRequests)],
  ["GET", "/audit", lazy(async () => (await usage()).auditLog)],
  ["GET", "/events", lazy(async () => (await import("./events.ts")).events)],
  ["GET", "/notifications/channels", lazy(async () => (await notify()).listChannels)],
  ["POST", "/notifications/channels", lazy(async () => (await notify()).createChannel)],
  ["POST", "/notifications/channels/:id/disable", lazy(async () => (await notify()).disableChannel)],
  ["GET", "/notifications/deliveries", lazy(async () => (await notify()).listDeliveries)],
  ["POST", "/announcements", lazy(async () => (await notify()).announce)],
  ["POST", "/cache/purge", lazy(async () => (await cache()).purgeCache)],
];

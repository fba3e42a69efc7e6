// The admin API's routes, mounted under /admin/v1 as an Elysia group of the gateway's app (src/server.ts).
// Every route checks the admin token and the client address (admin.allow_from) first.
import type { Route } from "../http/edge.ts";
import { createAccount, creditAccount, listAccounts, listGroups, setGroup } from "./api-accounts.ts";
import { createKeyRoute, enableKey, getKey, listKeys, revokeKey, updateKey } from "./api-keys.ts";
import { announce, createChannel, disableChannel, listChannels, listDeliveries } from "./api-notify.ts";
import { listTokens, revokeToken } from "./api-tokens.ts";
import { auditLog, recentRequests, usage } from "./api-usage.ts";
import { events } from "./events.ts";

/** Where the admin API is mounted (an Elysia group in src/server.ts). */
export const ADMIN_PREFIX = "/admin/v1";

export const ADMIN_ROUTES: readonly Route[] = [
  ["GET", "/accounts", listAccounts],
  ["POST", "/accounts", createAccount],
  ["POST", "/accounts/:name/credit", creditAccount],
  ["GET", "/groups", listGroups],
  ["POST", "/groups/:name", setGroup],
  ["GET", "/keys", listKeys],
  ["POST", "/keys", createKeyRoute],
  ["GET", "/keys/:id", getKey],
  ["POST", "/keys/:id", updateKey],
  ["POST", "/keys/:id/revoke", revokeKey],
  ["POST", "/keys/:id/enable", enableKey],
  ["GET", "/tokens", listTokens],
  ["POST", "/tokens/:id/revoke", revokeToken],
  ["GET", "/usage", usage],
  ["GET", "/requests", recentRequests],
  ["GET", "/audit", auditLog],
  ["GET", "/events", events],
  ["GET", "/notifications/channels", listChannels],
  ["POST", "/notifications/channels", createChannel],
  ["POST", "/notifications/channels/:id/disable", disableChannel],
  ["GET", "/notifications/deliveries", listDeliveries],
  ["POST", "/announcements", announce],
];

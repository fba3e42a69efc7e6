// The admin API's routes under /admin/v1, spread into the gateway's route table (src/server.ts).
// Every route checks the admin token and the client address (admin.allow_from) first.
import type { Handler } from "../http/edge.ts";
import { createAccount, creditAccount, listAccounts, listGroups, setGroup } from "./api-accounts.ts";
import { createKeyRoute, enableKey, getKey, listKeys, revokeKey, updateKey } from "./api-keys.ts";
import { announce, createChannel, disableChannel, listChannels, listDeliveries } from "./api-notify.ts";
import { listTokens, revokeToken } from "./api-tokens.ts";
import { auditLog, recentRequests, usage } from "./api-usage.ts";
import { events } from "./events.ts";

interface AdminRoute {
  method: "GET" | "POST";
  path: string;
  protocol: "openai";
  handler: Handler;
}

const route = (method: "GET" | "POST", path: string, handler: Handler): AdminRoute => ({
  method,
  path: `/admin/v1${path}`,
  protocol: "openai",
  handler,
});

export const ADMIN_ROUTES: readonly AdminRoute[] = [
  route("GET", "/accounts", listAccounts),
  route("POST", "/accounts", createAccount),
  route("POST", "/accounts/:name/credit", creditAccount),
  route("GET", "/groups", listGroups),
  route("POST", "/groups/:name", setGroup),
  route("GET", "/keys", listKeys),
  route("POST", "/keys", createKeyRoute),
  route("GET", "/keys/:id", getKey),
  route("POST", "/keys/:id", updateKey),
  route("POST", "/keys/:id/revoke", revokeKey),
  route("POST", "/keys/:id/enable", enableKey),
  route("GET", "/tokens", listTokens),
  route("POST", "/tokens/:id/revoke", revokeToken),
  route("GET", "/usage", usage),
  route("GET", "/requests", recentRequests),
  route("GET", "/audit", auditLog),
  route("GET", "/events", events),
  route("GET", "/notifications/channels", listChannels),
  route("POST", "/notifications/channels", createChannel),
  route("POST", "/notifications/channels/:id/disable", disableChannel),
  route("GET", "/notifications/deliveries", listDeliveries),
  route("POST", "/announcements", announce),
];

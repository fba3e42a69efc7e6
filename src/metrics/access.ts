// Who may read GET /metrics: clients from `metrics.allow_from` (by default the admin API's
// addresses, loopback unless configured), or any client presenting the scrape token named by
// `metrics.token_env`. Refusals are 403 (address) or 401 (wrong token), naming the setting.
import { createHash, timingSafeEqual } from "node:crypto";
import { CidrList } from "../base/ip.ts";
import { log } from "../base/log.ts";
import type { Gateway } from "../gateway.ts";
import type { Handler } from "../http/edge.ts";
import { GatewayError } from "../wire/errors.ts";
import { METRICS_CONTENT_TYPE, type Metrics } from "./metrics.ts";

const digest = (text: string) => createHash("sha256").update(text).digest();

function bearer(headers: Headers): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

/** The GET /metrics handler for this gateway: its access rule built once, checked per scrape. */
export function metricsHandler(metrics: Metrics, gateway: Gateway): Handler {
  const { allow_from, token_env } = gateway.config.metrics;
  const allowed = new CidrList(allow_from ?? gateway.config.admin.allow_from);
  const token = token_env === undefined ? undefined : process.env[token_env];
  if (token_env !== undefined && !token) {
    log("warn", "metrics.token_env names an unset variable: scrapes need an allowed address", {
      token_env,
    });
  }
  const tokenDigest = token ? digest(token) : undefined;
  return (ctx) => {
    const presented = bearer(ctx.request.headers);
    if (tokenDigest && presented !== undefined) {
      if (!timingSafeEqual(digest(presented), tokenDigest)) {
        throw new GatewayError(
          "invalid_api_key",
          "Incorrect metrics token: send the value of the variable metrics.token_env names as `Authorization: Bearer ...`.",
          { code: "invalid_metrics_token" },
        );
      }
    } else if (!allowed.contains(ctx.client)) {
      throw new GatewayError(
        "ip_not_allowed",
        `GET /metrics does not answer ${ctx.client?.toString() ?? "an unknown address"}: add it to metrics.allow_from${tokenDigest ? ", or send the scrape token as `Authorization: Bearer ...`" : ", or set metrics.token_env and scrape with that token"}.`,
        { code: "metrics_address_not_allowed" },
      );
    }
    const traffic: string[] = [];
    gateway.traffic.render(traffic);
    const body = `${metrics.render()}${traffic.join("\n")}\n`;
    return new Response(body, { headers: { "content-type": METRICS_CONTENT_TYPE } });
  };
}

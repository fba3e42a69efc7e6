// Who may scrape GET /metrics (issue 17, item 9): by default the admin API's addresses (loopback),
// otherwise `metrics.allow_from`, or any address with the token `metrics.token_env` names.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";

let open: RunningGateway;
let closed: RunningGateway;

beforeAll(async () => {
  [open, closed] = await Promise.all([
    startGateway(),
    startGateway({
      config: '[metrics]\nallow_from = ["10.0.0.0/8"]\ntoken_env = "SCRAPE_TOKEN"\n',
      env: { SCRAPE_TOKEN: "scrape-secret" },
    }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all([open.dispose(), closed.dispose()]);
}, 30_000);

const scrape = (gw: RunningGateway, token?: string) =>
  fetch(`${gw.url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test("by default a loopback client scrapes, as the admin API's addresses may", async () => {
  const r = await scrape(open);
  expect(r.status).toBe(200);
  expect(await r.text()).toContain("modelgate_requests_total");
});

test("outside metrics.allow_from: 403 without the token, 401 with a wrong one, 200 with it", async () => {
  const refused = await scrape(closed);
  expect(refused.status).toBe(403);
  const body = (await refused.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("metrics_address_not_allowed");
  expect(body.error.message).toContain("metrics.allow_from");
  expect((await scrape(closed, "wrong")).status).toBe(401);
  const allowed = await scrape(closed, "scrape-secret");
  expect(allowed.status).toBe(200);
  expect(await allowed.text()).toContain("modelgate_requests_total");
});

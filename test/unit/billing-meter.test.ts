// The meter against its API: atomic admission races (daily cap, balance, concurrency), settlement
// that is first-call-wins and durable before it resolves, the live feed, and balance reloads.
import { afterEach, describe, expect, test } from "bun:test";
import { NO_USAGE } from "../../src/billing/contract.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { admitInput, type Fixture, fixture, usage, usd } from "./billing-fixture.ts";

// modelx-5.4-mini: 0.10 USD/Mtok in, 0.40 USD/Mtok out → 1000 in + 1000 out = 0.0005 USD.
const WORST = { kind: "text", inputTokens: 1000, maxOutputTokens: 1000 } as const;
const WORST_NANOS = 500_000;
const FULL = usage({ inputTokens: 1000, outputTokens: 1000 });

let fx: Fixture;
afterEach(async () => {
  await fx.close();
});

function codeOf(reason: unknown): string | null {
  return reason instanceof GatewayError ? reason.code : `not a GatewayError: ${String(reason)}`;
}

describe("admission races", () => {
  test("50 concurrent admissions against a daily cap that fits exactly 10: 10 pass, 40 daily_quota_exceeded", async () => {
    fx = await fixture();
    const principal = fx.principal({ dailyCap: usd("0.005") });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST))),
    );
    const admitted = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === "rejected" ? [codeOf(r.reason)] : []));
    expect(admitted.length).toBe(10);
    expect(refused).toEqual(Array(40).fill("daily_quota_exceeded"));
    let view = await fx.meter.balance(principal);
    expect<number | undefined>(view.keyReserved).toBe(10 * WORST_NANOS);
    expect(view.spentToday + view.keyReserved).toBeLessThanOrEqual(usd("0.005"));
    await Promise.all(
      admitted.map((a) => a.settle({ status: 200, usage: FULL, source: "reported", channels: ["sim"] })),
    );
    view = await fx.meter.balance(principal);
    expect(view.spentToday).toBe(usd("0.005"));
    expect<number | undefined>(view.keyReserved).toBe(0);
    const again = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST)).catch(codeOf);
    expect(again).toBe("daily_quota_exceeded");
  });

  test("50 concurrent admissions against a balance that fits exactly 10: 10 pass, 40 insufficient_quota", async () => {
    fx = await fixture({ balance: "0.005" });
    const principal = fx.principal();
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () => fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST))),
    );
    const admitted = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const refused = results.flatMap((r) => (r.status === "rejected" ? [codeOf(r.reason)] : []));
    expect(admitted.length).toBe(10);
    expect(refused).toEqual(Array(40).fill("insufficient_quota"));
    await Promise.all(
      admitted.map((a) => a.settle({ status: 200, usage: FULL, source: "reported", channels: [] })),
    );
    const [account] = await fx.store.listAccounts();
    expect<number | undefined>(account?.balance).toBe(0);
    expect<number | undefined>((await fx.meter.balance(principal)).balance).toBe(0);
  });

  test("a concurrency limit of 3 with 20 parallel holders never has more than 3 in flight", async () => {
    fx = await fixture();
    const principal = fx.principal({ concurrency: 3 });
    let inFlight = 0;
    let peak = 0;
    let refusals = 0;
    const holder = async (i: number) => {
      for (;;) {
        try {
          const admission = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST));
          inFlight++;
          peak = Math.max(peak, inFlight);
          await Bun.sleep(2 + (i % 4));
          inFlight--;
          await admission.settle({ status: 200, usage: FULL, source: "reported", channels: [] });
          return;
        } catch (error) {
          expect(codeOf(error)).toBe("concurrency_limit_exceeded");
          refusals++;
          await Bun.sleep(1);
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, i) => holder(i)));
    expect(peak).toBe(3);
    expect(refusals).toBeGreaterThan(0);
    expect(fx.events.length).toBe(20);
    expect((await fx.meter.balance(principal)).inFlight).toBe(0);
  });
});

describe("settlement", () => {
  test("settle is first-call-wins and the record and debit are durable when it resolves", async () => {
    fx = await fixture();
    const input = admitInput(fx.principal(), "modelx-5.4-mini", WORST);
    const admission = await fx.meter.admit(input);
    await admission.settle({ status: 200, usage: FULL, source: "reported", channels: ["sim"], ttfbMs: 3 });
    await admission.settle({
      status: 200,
      usage: usage({ inputTokens: 99_999 }),
      source: "reported",
      channels: [],
    });
    const record = await fx.store.usage.find(input.requestId);
    expect(record).toMatchObject({
      requestId: input.requestId,
      keyId: "key_test",
      model: "modelx-5.4-mini",
      status: 200,
      inputTokens: 1000,
      outputTokens: 1000,
      costNanos: WORST_NANOS,
      usageSource: "reported",
      channels: ["sim"],
      ttfbMs: 3,
    });
    const [account] = await fx.store.listAccounts();
    expect<number | undefined>(account?.balance).toBe(usd("100") - WORST_NANOS);
    expect(fx.events.length).toBe(1);
    expect(fx.events[0]).toMatchObject({ requestId: input.requestId, costNanos: WORST_NANOS });
  });

  test("an upstream failure before any output (source none) is recorded at no charge and frees the slot", async () => {
    fx = await fixture();
    const principal = fx.principal({ concurrency: 1 });
    const input = admitInput(principal, "modelx-5.4-mini", WORST);
    const admission = await fx.meter.admit(input);
    await admission.settle({ status: 502, usage: NO_USAGE, source: "none", channels: ["a", "b"] });
    expect(await fx.store.usage.find(input.requestId)).toMatchObject({
      status: 502,
      costNanos: 0,
      channels: ["a", "b"],
    });
    const view = await fx.meter.balance(principal);
    expect(view).toMatchObject({ balance: usd("100"), accountReserved: 0, inFlight: 0 });
    await (await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST))).settle({
      status: 200,
      usage: NO_USAGE,
      source: "none",
      channels: [],
    });
  });

  test("a reused client request id is billed again under id~2, never dropped", async () => {
    fx = await fixture();
    const input = admitInput(fx.principal(), "modelx-5.4-mini", WORST);
    for (let i = 0; i < 2; i++) {
      const admission = await fx.meter.admit(input);
      await admission.settle({ status: 200, usage: FULL, source: "reported", channels: [] });
    }
    expect<number | undefined>((await fx.store.usage.find(input.requestId))?.costNanos).toBe(WORST_NANOS);
    expect<number | undefined>((await fx.store.usage.find(`${input.requestId}~2`))?.costNanos).toBe(
      WORST_NANOS,
    );
    const [account] = await fx.store.listAccounts();
    expect<number | undefined>(account?.balance).toBe(usd("100") - 2 * WORST_NANOS);
  });

  test("a credit made in the store while running is picked up without losing queued debits", async () => {
    fx = await fixture({ balance: "1" });
    const principal = fx.principal();
    const admission = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    const settled = admission.settle({ status: 200, usage: FULL, source: "reported", channels: [] });
    await fx.store.creditAccount("acme", usd("2"), "top-up");
    await fx.meter.reloadBalances();
    await settled;
    expect<number | undefined>((await fx.meter.balance(principal)).balance).toBe(usd("3") - WORST_NANOS);
    const [account] = await fx.store.listAccounts();
    expect<number | undefined>(account?.balance).toBe(usd("3") - WORST_NANOS);
  });

  test("admission headers report the RPM window; a 429 carries Retry-After in seconds and ms", async () => {
    fx = await fixture();
    const principal = fx.principal({ rpm: 2 });
    const first = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    expect(first.headers).toEqual({
      "x-ratelimit-limit-requests": "2",
      "x-ratelimit-remaining-requests": "1",
      "x-ratelimit-reset-requests": "1m0s",
    });
    fx.clock.t += 15_000;
    await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    fx.clock.t += 250;
    const refused = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST)).catch((e) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ status: 429, code: "rate_limit_exceeded", retryAfterSeconds: 44.75 });
    expect(refused.headers).toMatchObject({
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "44.75s",
    });
  });
});

// A cluster worker's RemoteMeter against the primary's WorkerHost in one process, every message
// passed through JSON as Bun's IPC does: a refusal is the very 429 the LedgerMeter throws, a
// settlement resolves once its record is stored, and the requests of a worker that died are
// released with no charge.
import { afterEach, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { NO_USAGE } from "../../src/billing/contract.ts";
import { WorkerHost } from "../../src/cluster/host.ts";
import { PrimaryLink } from "../../src/cluster/link.ts";
import { RemoteMeter } from "../../src/cluster/remote-meter.ts";
import { AdminConfigSchema } from "../../src/config/admin.ts";
import { Notifier } from "../../src/notify/notifier.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { admitInput, type Fixture, fixture, usage, usd } from "./billing-fixture.ts";

const WORST = { kind: "text", inputTokens: 1000, maxOutputTokens: 1000 } as const;
const FULL = usage({ inputTokens: 1000, outputTokens: 1000 });

let fx: Fixture;
afterEach(async () => {
  await fx.close();
});

/** A worker's meter wired to a host over a JSON "pipe" that delivers on a later turn, as IPC does. */
function cluster(f: Fixture) {
  const through = <T>(message: T): T => JSON.parse(JSON.stringify(message)) as T;
  const notifier = new Notifier(f.store, v.parse(AdminConfigSchema, {}).notifications);
  let link: PrimaryLink | undefined;
  const host = new WorkerHost(1, (m) => queueMicrotask(() => link?.receive(through(m))), {
    meter: f.meter,
    notifier,
  });
  link = new PrimaryLink((m) => queueMicrotask(() => host.receive(through(m))));
  return { host, remote: new RemoteMeter(link) };
}

function refusalOf(reason: unknown): GatewayError {
  if (!(reason instanceof GatewayError)) throw new Error(`not a GatewayError: ${String(reason)}`);
  return reason;
}

describe("RemoteMeter over the primary's WorkerHost", () => {
  test("a refusal is rebuilt as the same 429: kind, status, message, code, headers and Retry-After", async () => {
    fx = await fixture({ balance: "0.001" });
    const { remote } = cluster(fx);
    const principal = fx.principal({ rpm: 1 });
    const admitted = await remote.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    expect(admitted.headers["x-ratelimit-remaining-requests"]).toBe("0");
    const remoteError = refusalOf(
      await remote.admit(admitInput(principal, "modelx-5.4-mini", WORST)).catch((e: unknown) => e),
    );
    const localError = refusalOf(
      await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST)).catch((e: unknown) => e),
    );
    expect(remoteError.code).toBe("rate_limit_exceeded");
    for (const error of [remoteError, localError]) expect(error.status).toBe(429);
    expect({ ...remoteError, message: remoteError.message }).toEqual({
      ...localError,
      message: localError.message,
    });

    const money = fx.principal({ dailyCap: null });
    const poor = refusalOf(
      await remote
        .admit(
          admitInput(money, "modelx-5.4-mini", { kind: "text", inputTokens: 1000, maxOutputTokens: 10_000 }),
        )
        .catch((e: unknown) => e),
    );
    expect(poor.code).toBe("insufficient_quota");
    expect(poor.kind).toBe("quota_exceeded");
    expect(poor.headers?.["x-should-retry"]).toBe("false");
    await admitted.settle({ status: 200, usage: FULL, source: "reported", channels: ["sim"] });
  });

  test("settle resolves once the record is stored; the balance view comes from the primary", async () => {
    fx = await fixture();
    const { remote, host } = cluster(fx);
    const principal = fx.principal();
    const admission = await remote.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    expect(host.open).toBe(1);
    let view = await remote.balance(principal);
    expect(view.inFlight).toBe(1);
    expect<number>(view.accountReserved).toBe(500_000);
    await admission.settle({ status: 200, usage: FULL, source: "reported", channels: ["sim"] });
    expect(host.open).toBe(0);
    const [account] = await fx.store.listAccounts();
    expect<number | undefined>(account?.balance).toBe(usd("100") - 500_000);
    view = await remote.balance(principal);
    expect(view.inFlight).toBe(0);
    expect<number>(view.balance).toBe(usd("100") - 500_000);
    // First call wins, as with a local meter: a second settle sends nothing and charges nothing.
    await admission.settle({ status: 200, usage: FULL, source: "reported", channels: ["sim"] });
    const [again] = await fx.store.listAccounts();
    expect(again?.balance).toBe(account?.balance);
  });

  test("a dead worker's open requests are released with no charge and recorded as abandoned", async () => {
    fx = await fixture();
    const { remote, host } = cluster(fx);
    const principal = fx.principal({ concurrency: 2 });
    await remote.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    await remote.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    const full = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST)).catch(refusalOf);
    expect(full).toBeInstanceOf(GatewayError);
    expect(await host.abandon("worker 1 exited: SIGKILL")).toBe(2);
    const view = await fx.meter.balance(principal);
    expect(view.inFlight).toBe(0);
    expect<number>(view.accountReserved).toBe(0);
    expect<number>(view.balance).toBe(usd("100"));
    const records = await fx.store.admin.recentRequests({ since: 0 }, 10);
    expect(records.map((r) => [r.status, r.costNanos])).toEqual([
      [500, 0],
      [500, 0],
    ]);
    const next = await fx.meter.admit(admitInput(principal, "modelx-5.4-mini", WORST));
    await next.settle({ status: 200, usage: NO_USAGE, source: "none", channels: [] });
  });
});

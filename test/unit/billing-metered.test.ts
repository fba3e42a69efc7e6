// The billing layer (src/billing/layer.ts) around a request's work: admitted before the work
// runs, settled exactly once however the work ends — a complete answer before it is returned, a
// thrown error as a failure with the channels tried and the x-ratelimit headers on the error, a
// stream when it reports its end (which waits until the record is durable) — and the headers on
// every answer. And the text run inside it: routing happens after admission.
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import type { Principal } from "../../src/auth/keys.ts";
import { Handoff } from "../../src/base/handoff.ts";
import { nanos } from "../../src/base/money.ts";
import type { Nanos } from "../../src/base/types.ts";
import type { Admission, AdmitInput, Meter, Settlement } from "../../src/billing/contract.ts";
import { type Ending, metered, NO_USAGE } from "../../src/billing/layer.ts";
import { ResponseCache } from "../../src/cache/cache.ts";
import { AliasTable } from "../../src/catalog/aliases.ts";
import { ModelAllowList } from "../../src/catalog/groups.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import type { Gateway } from "../../src/gateway.ts";
import { textRow } from "../../src/handlers/text.ts";
import type { RequestContext } from "../../src/http/context.ts";
import { PROTOCOLS } from "../../src/protocols/index.ts";
import { ChannelTable } from "../../src/upstream/channels.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { acct, kid } from "../helpers/ids.ts";
import { admitInput } from "./billing-fixture.ts";

const createChatCompletion = textRow(PROTOCOLS.chat);

const RATE = { "x-ratelimit-remaining-requests": "9" };

/** A meter that records, and whose settlement resolves only when the test lets it (durability). */
class HeldMeter implements Meter {
  readonly admitted: AdmitInput[] = [];
  readonly settled: Settlement[] = [];
  #release: (() => void) | undefined;
  failSettle = false;

  async admit(input: AdmitInput): Promise<Admission> {
    this.admitted.push(input);
    return {
      headers: RATE,
      settle: (result) => {
        this.settled.push(result);
        if (this.failSettle) return Promise.reject(new Error("the store refused"));
        return new Promise<Nanos>((resolve) => {
          this.#release = () => resolve(nanos(1234));
        });
      },
    };
  }

  /** Makes the pending settlement durable. */
  release(): void {
    this.#release?.();
  }
}

const input = admitInput(
  {
    keyId: kid("key_test"),
    keyName: "test",
    accountId: acct(1),
    accountName: "default",
    group: "default",
    models: new ModelAllowList(["*"]),
    dailyCap: null,
    rpm: null,
    concurrency: null,
    tpm: null,
    budgets: null,
    accountBudgets: null,
  },
  "modelx-5.4-mini",
  { kind: "text", inputTokens: 10, maxOutputTokens: 10 },
);
const ENDING: Ending = { status: 200, usage: { ...NO_USAGE, outputTokens: 3 }, source: "reported" };
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("metered", () => {
  test("a complete answer is settled once, with the channels, before it is returned with the headers", async () => {
    const meter = new HeldMeter();
    let returned = false;
    const answer = metered(meter, input, undefined, async (channels) => {
      channels.push("a", "b");
      return { response: new Response("{}"), complete: ENDING };
    }).then((response) => {
      returned = true;
      return response;
    });
    await tick();
    expect(meter.settled).toEqual([{ ...ENDING, channels: ["a", "b"] }]);
    expect(returned).toBe(false);
    meter.release();
    const response = await answer;
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    expect(response.headers.get("x-modelgate-cost-usd")).toBe("0.000001234");
    expect(meter.admitted).toHaveLength(1);
  });

  test("a thrown error is settled as a failure with the channels tried and rethrown with the headers", async () => {
    const meter = new HeldMeter();
    const failing = metered(meter, input, undefined, async (channels) => {
      channels.push("broken");
      throw new GatewayError("upstream_failed", "no channel answered");
    });
    await tick();
    meter.release();
    const error = await failing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    // The settled cost goes on the error too (a failure may still bill what it produced).
    expect((error as GatewayError).headers).toEqual({ ...RATE, "x-modelgate-cost-usd": "0.000001234" });
    expect(meter.settled).toEqual([{ status: 502, usage: NO_USAGE, source: "none", channels: ["broken"] }]);
  });

  test("a failure settles what the work's own figures say when it gives them", async () => {
    const meter = new HeldMeter();
    const failing = metered(
      meter,
      input,
      undefined,
      async () => {
        throw new GatewayError("upstream_failed", "broke after one image");
      },
      (status) => ({ status, usage: { ...NO_USAGE, generations: 1 }, source: "estimated" }),
    );
    await tick();
    meter.release();
    await failing.catch(() => undefined);
    expect(meter.settled.map((s) => [s.status, s.usage.generations, s.source])).toEqual([
      [502, 1, "estimated"],
    ]);
  });

  test("a stream is returned at once and settled when it reports its end; the report waits for durability", async () => {
    const meter = new HeldMeter();
    const ended = new Handoff<Ending, Nanos>();
    const response = await metered(meter, input, undefined, async (channels) => {
      channels.push("a");
      return { response: new Response("data: x\n\n"), ended };
    });
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    expect(meter.settled).toEqual([]);
    let recorded = false;
    const sent = ended.send(ENDING).then(() => {
      recorded = true;
    });
    await tick();
    expect(meter.settled).toEqual([{ ...ENDING, channels: ["a"] }]);
    expect(recorded).toBe(false);
    // A second report (a cancel after the end) settles nothing more and waits for the same record.
    const again = ended.send({ ...ENDING, status: 499 });
    meter.release();
    await sent;
    await again;
    expect(recorded).toBe(true);
    expect(meter.settled).toHaveLength(1);
  });

  test("a stream's report rejects when its settlement fails, so the stream ends in error", async () => {
    const meter = new HeldMeter();
    meter.failSettle = true;
    const ended = new Handoff<Ending, Nanos>();
    await metered(meter, input, undefined, async () => ({ response: new Response(""), ended }));
    await expect(ended.send(ENDING)).rejects.toThrow("the store refused");
  });

  test("a refused admission runs no work", async () => {
    const refusing: Meter = {
      admit: async () => {
        throw new GatewayError("rate_limited", "slow down");
      },
    };
    let ran = false;
    const refused = metered(refusing, input, undefined, async () => {
      ran = true;
      return { response: new Response(""), complete: ENDING };
    });
    await expect(refused).rejects.toThrow("slow down");
    expect(ran).toBe(false);
  });
});

describe("the text run inside the layer", () => {
  test("routing is inside: a model no text channel serves is admitted, then settled once as a 404", async () => {
    const config = v.parse(ConfigSchema, {
      channels: [
        { kind: "openai-images", name: "images-only", base_url: "http://127.0.0.1:9/v1", models: ["*"] },
      ],
    });
    const meter = new HeldMeter();
    const principal = input.principal as Principal;
    const keys = { authenticate: () => principal };
    const gateway = {
      config,
      channels: new ChannelTable(config),
      meter,
      keys,
      aliases: new AliasTable(config.aliases),
      cache: new ResponseCache(config.cache, undefined),
    } as unknown as Gateway;
    const body = JSON.stringify({ model: "modelx-5.4-mini", messages: [{ role: "user", content: "hi" }] });
    const ctx: RequestContext = {
      request: new Request("http://gateway.test/v1/chat/completions", { method: "POST", body }),
      requestId: "req_route",
      client: undefined,
      startedAt: performance.now(),
      protocol: "openai",
      route: "/v1/chat/completions",
      upstreamMs: 0,
    };
    const answer = createChatCompletion(ctx, gateway, new TextEncoder().encode(body)).catch(
      (e: unknown) => e,
    );
    await tick();
    meter.release();
    expect(await answer).toMatchObject({ kind: "model_not_served", status: 404, headers: RATE });
    expect(meter.admitted).toHaveLength(1);
    expect(meter.settled).toEqual([{ status: 404, usage: NO_USAGE, source: "none", channels: [] }]);
  });
});

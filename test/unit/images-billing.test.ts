// Billing facts of image requests: admit with the worst case n × (1 + partial_images) generations,
// settle exactly once on every path (success, stream, client disconnect, upstream error).
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import type { Principal } from "../../src/auth/keys.ts";
import { nanos } from "../../src/base/money.ts";
import type { Admission, AdmitInput, Meter, Settlement } from "../../src/billing/contract.ts";
import { findModel } from "../../src/catalog/models.ts";
import { ConfigSchema } from "../../src/config/schema.ts";
import type { Gateway } from "../../src/gateway.ts";
import { recognise } from "../../src/handlers/images-upload.ts";
import type { RequestContext } from "../../src/http/context.ts";
import { runImages } from "../../src/pipeline/images.ts";
import { ChannelTable } from "../../src/upstream/channels.ts";
import type { ImageOptions } from "../../src/wire/images.ts";
import { waitFor } from "../helpers/wait.ts";
import { flatPng } from "./images-fixtures.ts";

class RecordingMeter implements Meter {
  readonly admitted: AdmitInput[] = [];
  readonly settled: Settlement[] = [];
  async admit(input: AdmitInput): Promise<Admission> {
    this.admitted.push(input);
    const settled = this.settled;
    return {
      headers: { "x-ratelimit-remaining-requests": "9" },
      settle: async (s) => {
        settled.push(s);
        return nanos(0);
      },
    };
  }
}

function gatewayWith(channels: unknown[]): { gateway: Gateway; meter: RecordingMeter } {
  const config = v.parse(ConfigSchema, { channels });
  const meter = new RecordingMeter();
  const gateway = { config, channels: new ChannelTable(config), meter } as unknown as Gateway;
  return { gateway, meter };
}

const SIM = [{ kind: "sim", name: "sim" }];
const model = findModel("modelx-image-2");
const principal = { keyId: "key_test", models: { allows: () => true } } as unknown as Principal;
const ctx = (): RequestContext => ({
  request: new Request("http://gateway.test/v1/images/generations", { method: "POST" }),
  requestId: `req_${crypto.randomUUID()}`,
  client: undefined,
  startedAt: performance.now(),
  protocol: "openai",
  route: "/v1/images/generations",
  upstreamMs: 0,
});

function options(extra: Partial<ImageOptions>): ImageOptions {
  return {
    prompt: "a boat",
    size: "32x32",
    quality: "high",
    background: "auto",
    outputFormat: "png",
    outputCompression: 100,
    moderation: "auto",
    n: 1,
    stream: false,
    partialImages: 0,
    user: "end-user-7",
    inputFidelity: undefined,
    ...extra,
  };
}

function generation(gateway: Gateway, extra: Partial<ImageOptions>) {
  if (!model) throw new Error("catalog lacks modelx-image-2");
  return runImages(ctx(), gateway, {
    principal,
    model,
    endpoint: "/v1/images/generations",
    job: { kind: "generation", options: options(extra), images: [], mask: undefined, extra: {} },
  });
}

describe("image billing facts", () => {
  test("non-stream: worst case n generations, settled once with quality, size, format and the end user", async () => {
    const { gateway, meter } = gatewayWith(SIM);
    const response = await generation(gateway, { n: 2 });
    expect(response.headers.get("x-ratelimit-remaining-requests")).toBe("9");
    expect(meter.admitted[0]).toMatchObject({
      endUser: "end-user-7",
      stream: false,
      worstCase: { kind: "image", generations: 2, quality: "high", size: "32x32" },
    });
    expect(meter.settled).toHaveLength(1);
    expect(meter.settled[0]).toMatchObject({
      status: 200,
      source: "reported",
      channels: ["sim"],
      usage: { generations: 2 },
      detail: { quality: "high", size: "32x32", output_format: "png", input_fidelity: null },
    });
  });

  test("stream: each progress image is a generation (partial_images 3 → 4)", async () => {
    const { gateway, meter } = gatewayWith(SIM);
    const response = await generation(gateway, { stream: true, partialImages: 3 });
    expect(meter.admitted[0]?.worstCase).toMatchObject({ generations: 4 });
    await response.text();
    expect(meter.settled).toHaveLength(1);
    expect(meter.settled[0]?.usage.generations).toBe(4);
  });

  test("client disconnect mid-stream settles once with what was produced", async () => {
    const { gateway, meter } = gatewayWith(SIM);
    const response = await generation(gateway, { stream: true, partialImages: 3, n: 2 });
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    await waitFor("the cut stream to settle", () => meter.settled.length > 0);
    expect(meter.settled).toHaveLength(1);
    expect(meter.settled[0]?.status).toBe(200);
    expect(meter.settled[0]?.usage.generations).toBeLessThan(8);
  });

  test("upstream failure on every channel settles once with the error status and no generations", async () => {
    const dead = { kind: "openai-images", name: "dead", base_url: "http://127.0.0.1:9/v1", models: ["*"] };
    const { gateway, meter } = gatewayWith([dead]);
    await expect(generation(gateway, {})).rejects.toMatchObject({ status: 502 });
    // The failover loop retries the only channel after a backoff, so it is listed once per attempt.
    const channels = meter.settled[0]?.channels ?? [];
    expect(channels.length).toBeGreaterThanOrEqual(1);
    expect(new Set(channels)).toEqual(new Set(["dead"]));
    expect(meter.settled).toEqual([
      expect.objectContaining({
        status: 502,
        source: "none",
        usage: expect.objectContaining({ generations: 0 }),
      }),
    ]);
  });

  test("an admitted request's error carries the x-ratelimit headers, as every answer does", async () => {
    const { gateway } = gatewayWith([
      { kind: "openai-images", name: "dead", base_url: "http://127.0.0.1:9/v1", models: ["*"] },
    ]);
    const error = await generation(gateway, {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 502, headers: { "x-ratelimit-remaining-requests": "9" } });
  });

  test("edits carry input fidelity in the worst case and the settlement", async () => {
    const { gateway, meter } = gatewayWith(SIM);
    if (!model) throw new Error("catalog lacks modelx-image-2");
    const image = recognise(flatPng(16, 16), "image");
    await runImages(ctx(), gateway, {
      principal,
      model,
      endpoint: "/v1/images/edits",
      job: {
        kind: "edit",
        options: options({ inputFidelity: "high", size: "auto" }),
        images: [image],
        mask: undefined,
        extra: {},
      },
    });
    expect(meter.admitted[0]?.worstCase).toMatchObject({ generations: 1, inputFidelity: "high" });
    expect(meter.settled).toHaveLength(1);
    expect(meter.settled[0]?.detail).toMatchObject({ input_fidelity: "high", size: "16x16" });
  });
});

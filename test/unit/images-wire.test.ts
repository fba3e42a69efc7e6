// Images wire: body validation (field-named errors, statuses) and file recognition by bytes.
import { describe, expect, test } from "bun:test";
import { encodeImage } from "../../src/sim/images/codecs.ts";
import { parseOrThrow } from "../../src/wire/decode.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import {
  coerceFormFields,
  EditFieldsSchema,
  GenerationBodySchema,
  toImageOptions,
} from "../../src/wire/images.ts";
import { dimensionProblem, sniffImage } from "../../src/wire/images-sniff.ts";
import { flatPng, makePng } from "./images-fixtures.ts";

function refusal(body: Record<string, unknown>): GatewayError {
  try {
    toImageOptions(parseOrThrow(GenerationBodySchema, body));
  } catch (thrown) {
    if (thrown instanceof GatewayError) return thrown;
    throw thrown;
  }
  throw new Error(`accepted: ${JSON.stringify(body)}`);
}

const ok = { model: "modelx-image-2", prompt: "a red fox" };

describe("generation body", () => {
  test("defaults follow docs/api.md", () => {
    const o = toImageOptions(parseOrThrow(GenerationBodySchema, ok));
    expect(o).toMatchObject({ size: "auto", quality: "auto", background: "auto", outputFormat: "png" });
    expect(o).toMatchObject({
      outputCompression: 100,
      moderation: "auto",
      n: 1,
      stream: false,
      partialImages: 0,
    });
  });

  test("every violation names its field; ranges are 422, the rest 400", () => {
    const cases: [Record<string, unknown>, string, number][] = [
      [{ model: "modelx-image-2" }, "prompt", 400],
      [{ ...ok, prompt: "" }, "prompt", 400],
      [{ ...ok, prompt: "   " }, "prompt", 400],
      [{ ...ok, prompt: "x".repeat(32_001) }, "prompt", 400],
      [{ ...ok, size: "huge" }, "size", 400],
      [{ ...ok, size: "8x8" }, "size", 400],
      [{ ...ok, size: "5000x1024" }, "size", 400],
      [{ ...ok, quality: "ultra" }, "quality", 400],
      [{ ...ok, background: "clear" }, "background", 400],
      [{ ...ok, output_format: "gif" }, "output_format", 400],
      [{ ...ok, output_compression: 101 }, "output_compression", 422],
      [{ ...ok, output_compression: -1 }, "output_compression", 422],
      [{ ...ok, moderation: "high" }, "moderation", 400],
      [{ ...ok, n: 0 }, "n", 422],
      [{ ...ok, n: 11 }, "n", 422],
      [{ ...ok, n: 1.5 }, "n", 400],
      [{ ...ok, partial_images: 4 }, "partial_images", 422],
      [{ ...ok, stream: "yes" }, "stream", 400],
      [{ ...ok, background: "transparent", output_format: "jpeg" }, "background", 400],
    ];
    for (const [body, param, status] of cases) {
      const error = refusal(body);
      expect({ param: error.param, status: error.status }).toEqual({ param, status });
      expect(error.message.startsWith(`${param}:`) || error.message.includes(param)).toBe(true);
    }
  });

  test("32000 characters, lenient sizes and any response_format are accepted", () => {
    for (const extra of [
      { prompt: "x".repeat(32_000) },
      { size: "64x64" },
      { size: "1536x1024" },
      { size: "4096x16" },
      { response_format: "url" },
      { response_format: { type: "weird" } },
      { background: "transparent", output_format: "webp" },
    ]) {
      expect(() => parseOrThrow(GenerationBodySchema, { ...ok, ...extra })).not.toThrow();
    }
  });

  test("partial_images only counts when streaming", () => {
    expect(
      toImageOptions(parseOrThrow(GenerationBodySchema, { ...ok, partial_images: 2 })).partialImages,
    ).toBe(0);
    const streamed = parseOrThrow(GenerationBodySchema, { ...ok, stream: true, partial_images: 2 });
    expect(toImageOptions(streamed).partialImages).toBe(2);
  });

  test("multipart fields are coerced for the same rules, with input_fidelity", () => {
    const fields = coerceFormFields({
      ...ok,
      n: "2",
      stream: "true",
      partial_images: "3",
      input_fidelity: "high",
    });
    const o = toImageOptions(parseOrThrow(EditFieldsSchema, fields));
    expect(o).toMatchObject({ n: 2, stream: true, partialImages: 3, inputFidelity: "high" });
    expect(() => parseOrThrow(EditFieldsSchema, coerceFormFields({ ...ok, input_fidelity: "max" }))).toThrow(
      /input_fidelity/,
    );
    expect(() => parseOrThrow(EditFieldsSchema, coerceFormFields({ ...ok, n: "two" }))).toThrow(/^n:/);
  });
});

describe("file recognition by bytes", () => {
  test("PNG with and without alpha, JPEG and WebP give format, size and alpha", async () => {
    expect(sniffImage(flatPng(40, 30))).toEqual({ format: "png", width: 40, height: 30, hasAlpha: true });
    const rgb = makePng(40, 30, () => [1, 2, 3, 255], false);
    expect(sniffImage(rgb)).toEqual({ format: "png", width: 40, height: 30, hasAlpha: false });
    const raster = { width: 33, height: 17, data: new Uint8Array(33 * 17 * 4).fill(200) };
    expect(sniffImage(await encodeImage(raster, "jpeg", 80))).toEqual({
      format: "jpeg",
      width: 33,
      height: 17,
      hasAlpha: false,
    });
    const webp = sniffImage(await encodeImage(raster, "webp", 80));
    expect(webp).toMatchObject({ format: "webp", width: 33, height: 17 });
  });

  test("anything else is not an image, whatever its name would say", () => {
    expect(sniffImage(new TextEncoder().encode("GIF89a...................."))).toBeUndefined();
    expect(sniffImage(new Uint8Array(100))).toBeUndefined();
  });

  test("a header claiming huge dimensions is refused before decoding", () => {
    const png = flatPng(4, 4);
    const view = new DataView(png.buffer);
    view.setUint32(16, 100_000);
    view.setUint32(20, 100_000);
    const info = sniffImage(png);
    expect(info).toMatchObject({ width: 100_000, height: 100_000 });
    if (!info) throw new Error("unreadable");
    expect(dimensionProblem(info)).toContain("100000x100000");
    expect(dimensionProblem({ ...info, width: 4096, height: 4096 })).toBeUndefined();
  });
});

// Image codecs for the simulator: PNG (pngjs) and JPEG (jpeg-js) in pure JS, WebP through
// libwebp compiled to WebAssembly (@jsquash/webp). The .wasm files are embedded with
// `type: "file"` imports so they load inside the single compiled executable too.

import webpDecFactory from "@jsquash/webp/codec/dec/webp_dec.js";
import webpDecWasm from "@jsquash/webp/codec/dec/webp_dec.wasm" with { type: "file" };
import webpEncFactory from "@jsquash/webp/codec/enc/webp_enc.js";
import webpEncWasm from "@jsquash/webp/codec/enc/webp_enc.wasm" with { type: "file" };
import { defaultOptions as webpDefaults } from "@jsquash/webp/meta.js";
import jpeg from "jpeg-js";
import { PNG } from "pngjs";
import { dimensionProblem, type ImageFormat, sniffImage } from "../../wire/images-sniff.ts";

/** Decoded pixels: `data` is RGBA, 4 bytes per pixel, row by row. */
export interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

interface WebpCodecs {
  encode(data: Uint8Array, width: number, height: number, options: typeof webpDefaults): Uint8Array | null;
  decode(data: Uint8Array): { data: Uint8ClampedArray; width: number; height: number } | null;
}

let webp: Promise<WebpCodecs> | undefined;

async function instantiate<M>(
  factory: (options: Record<string, unknown>) => Promise<M>,
  wasmFile: string,
): Promise<M> {
  const module = new WebAssembly.Module(await Bun.file(wasmFile).arrayBuffer());
  return factory({
    noInitialRun: true,
    instantiateWasm(
      imports: ConstructorParameters<typeof WebAssembly.Instance>[1],
      done: (instance: WebAssembly.Instance) => void,
    ) {
      const instance = new WebAssembly.Instance(module, imports);
      done(instance);
      return instance.exports;
    },
  });
}

/** Loads the WebP codecs once, on first use. */
function webpCodecs(): Promise<WebpCodecs> {
  webp ??= (async () => {
    const [enc, dec] = await Promise.all([
      instantiate(
        webpEncFactory as unknown as (o: Record<string, unknown>) => Promise<WebpCodecs>,
        webpEncWasm,
      ),
      instantiate(
        webpDecFactory as unknown as (o: Record<string, unknown>) => Promise<WebpCodecs>,
        webpDecWasm,
      ),
    ]);
    return { encode: enc.encode.bind(enc), decode: dec.decode.bind(dec) };
  })();
  return webp;
}

/** Encodes pixels; `compression` (0-100, higher is better quality) applies to JPEG and WebP. */
export async function encodeImage(
  raster: Raster,
  format: ImageFormat,
  compression: number,
): Promise<Uint8Array> {
  const { width, height, data } = raster;
  switch (format) {
    case "png": {
      const png = new PNG({ width, height });
      png.data = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      return new Uint8Array(PNG.sync.write(png, { colorType: 6 }));
    }
    case "jpeg": {
      const frame = { data: Buffer.from(data.buffer, data.byteOffset, data.byteLength), width, height };
      return new Uint8Array(jpeg.encode(frame, Math.max(1, compression)).data);
    }
    case "webp": {
      const codecs = await webpCodecs();
      const out = codecs.encode(data, width, height, { ...webpDefaults, quality: compression });
      if (!out) throw new Error("webp encoding failed");
      return new Uint8Array(out);
    }
  }
}

/** Decodes PNG, JPEG or WebP bytes into RGBA, refusing unreadable or oversized headers first. */
export async function decodeImage(bytes: Uint8Array): Promise<Raster> {
  const info = sniffImage(bytes);
  if (!info) throw new Error("not a PNG, JPEG or WebP image");
  const problem = dimensionProblem(info);
  if (problem) throw new Error(`image refused: ${problem}`);
  switch (info.format) {
    case "png": {
      const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return { width: png.width, height: png.height, data: new Uint8Array(png.data) };
    }
    case "jpeg": {
      const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
      return { width: img.width, height: img.height, data: img.data };
    }
    case "webp": {
      const img = (await webpCodecs()).decode(bytes);
      if (!img) throw new Error("webp decoding failed");
      return { width: img.width, height: img.height, data: new Uint8Array(img.data.buffer) };
    }
  }
}

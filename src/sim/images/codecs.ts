// Image codecs for the simulator: PNG (pngjs) and JPEG (jpeg-js) in pure JS, WebP through
// libwebp compiled to WebAssembly (@jsquash/webp). The .wasm files are embedded with
// `type: "file"` imports so they load inside the single compiled executable too. Every codec is
// loaded on first use: a gateway that never simulates an image does not pay their memory.

import webpDecWasm from "@jsquash/webp/codec/dec/webp_dec.wasm" with { type: "file" };
import webpEncWasm from "@jsquash/webp/codec/enc/webp_enc.wasm" with { type: "file" };
import type { defaultOptions } from "@jsquash/webp/meta.js";
import { dimensionProblem, type ImageFormat, sniffImage } from "../../wire/images-sniff.ts";

/** Decoded pixels: `data` is RGBA, 4 bytes per pixel, row by row. */
export interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

interface WebpCodecs {
  encode(data: Uint8Array, width: number, height: number, options: typeof defaultOptions): Uint8Array | null;
  decode(data: Uint8Array): { data: Uint8ClampedArray; width: number; height: number } | null;
  defaults: typeof defaultOptions;
}

let webp: Promise<WebpCodecs> | undefined;
let pngjs: Promise<typeof import("pngjs")> | undefined;
let jpegJs: Promise<typeof import("jpeg-js")> | undefined;

const pngLib = () => (pngjs ??= import("pngjs"));
const jpegLib = () => (jpegJs ??= import("jpeg-js"));

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
    const hadLocation = "location" in globalThis;
    const [encModule, decModule, meta] = await Promise.all([
      import("@jsquash/webp/codec/enc/webp_enc.js"),
      import("@jsquash/webp/codec/dec/webp_dec.js"),
      import("@jsquash/webp/meta.js"),
    ]);

    type Factory = (o: Record<string, unknown>) => Promise<Omit<WebpCodecs, "defaults">>;
    const [enc, dec] = await Promise.all([
      instantiate(encModule.default as unknown as Factory, webpEncWasm),
      instantiate(decModule.default as unknown as Factory, webpDecWasm),
    ]);
    // The Emscripten glue sets `self.location = {href: ""}` outside a browser when its factory runs;
    // other code takes a defined `location` for a page and resolves URLs against its empty href,
    // which throws (OpenTelemetry's exporter did, for an endpoint configured after a WebP image).
    if (!hadLocation) Reflect.deleteProperty(globalThis, "location");
    return { encode: enc.encode.bind(enc), decode: dec.decode.bind(dec), defaults: meta.defaultOptions };
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
      const { PNG } = await pngLib();
      const png = new PNG({ width, height });
      png.data = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      return new Uint8Array(PNG.sync.write(png, { colorType: 6 }));
    }
    case "jpeg": {
      const frame = { data: Buffer.from(data.buffer, data.byteOffset, data.byteLength), width, height };
      const jpeg = await jpegLib();
      return new Uint8Array(jpeg.encode(frame, Math.max(1, compression)).data);
    }
    case "webp": {
      const codecs = await webpCodecs();
      const out = codecs.encode(data, width, height, { ...codecs.defaults, quality: compression });
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
      const { PNG } = await pngLib();
      const png = PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return { width: png.width, height: png.height, data: new Uint8Array(png.data) };
    }
    case "jpeg": {
      const jpeg = await jpegLib();
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

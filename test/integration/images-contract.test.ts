// What the gateway sends to an OpenAI images upstream, captured by a recording upstream and checked
// against the strict schemas of the official API reference (test/contract/images-schemas.ts):
// generations as JSON and edits as multipart, streamed and not, with and without a mask, with one
// and with several reference images of different formats. Each file part must carry the type its
// bytes are (image/png, image/jpeg, image/webp; the mask image/png) and a file name to match.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as v from "valibot";
import { encodeImage } from "../../src/sim/images/codecs.ts";
import { sniffFormat } from "../../src/wire/images-sniff.ts";
import {
  EditFieldsSchema,
  EditFilesSchema,
  GenerationRequestSchema,
  splitForm,
} from "../contract/images-schemas.ts";
import { type RunningGateway, startGateway } from "../helpers/gateway.ts";
import {
  type RecordedRequest,
  type RecordingUpstream,
  startRecordingUpstream,
} from "../helpers/recording-upstream.ts";
import { flatPng, halfMask } from "../unit/images-fixtures.ts";

const IMAGE_B64 = Buffer.from(flatPng(16, 16)).toString("base64");
const USAGE = {
  input_tokens: 10,
  output_tokens: 272,
  total_tokens: 282,
  input_tokens_details: { text_tokens: 10, image_tokens: 0 },
};
const MIME = { png: "image/png", jpeg: "image/jpeg", webp: "image/webp" } as const;

/** Answers like the real API: a JSON ImagesResponse, or its event stream when asked to stream. */
function answer(request: RecordedRequest): Response {
  const edit = request.path.endsWith("/images/edits");
  const stream = edit
    ? request.form?.get("stream") === "true"
    : (request.json as { stream?: boolean }).stream;
  const meta = { size: "1024x1024", quality: "low", background: "opaque", output_format: "png" };
  if (!stream) return Response.json({ created: 1, data: [{ b64_json: IMAGE_B64 }], ...meta, usage: USAGE });
  const prefix = edit ? "image_edit" : "image_generation";
  const event = (type: string, fields: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
  const body =
    event(`${prefix}.partial_image`, {
      b64_json: IMAGE_B64,
      created_at: 1,
      partial_image_index: 0,
      ...meta,
    }) + event(`${prefix}.completed`, { b64_json: IMAGE_B64, created_at: 1, ...meta, usage: USAGE });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

let upstream: RecordingUpstream;
let gw: RunningGateway;
let auth: Record<string, string>;
let jpeg: Uint8Array;
let webp: Uint8Array;

beforeAll(async () => {
  upstream = startRecordingUpstream(answer);
  gw = await startGateway({
    config: `
[[channels]]
kind = "openai-images"
name = "recorded"
base_url = "${upstream.url}/v1"
models = ["modelx-image-*"]
model_map = { "modelx-image-2" = "upstream-image-2" }
`,
  });
  auth = { authorization: `Bearer ${gw.key}` };
  const raster = { width: 64, height: 64, data: new Uint8Array(64 * 64 * 4).fill(200) };
  jpeg = await encodeImage(raster, "jpeg", 80);
  webp = await encodeImage(raster, "webp", 80);
}, 30_000);

afterAll(async () => {
  await gw.dispose();
  await upstream.stop();
}, 30_000);

/** Fails with the schema's own words when the value does not pass. */
function expectValid(schema: v.GenericSchema, value: unknown): void {
  const result = v.safeParse(schema, value);
  const problems = result.success ? [] : result.issues.map((i) => `${v.getDotPath(i) ?? ""}: ${i.message}`);
  expect(problems).toEqual([]);
}

describe("generations toward an OpenAI images upstream", () => {
  test.each([
    ["plain", { prompt: "a kite" }],
    [
      "jpeg with compression",
      { prompt: "a kite", output_format: "jpeg", output_compression: 60, quality: "low" },
    ],
    ["streamed with partials", { prompt: "a kite", stream: true, partial_images: 2, n: 1 }],
    [
      "transparent webp, two images",
      { prompt: "a kite", background: "transparent", output_format: "webp", n: 2 },
    ],
  ])("%s: the JSON body passes the strict schema", async (_label, fields) => {
    upstream.clear();
    const response = await fetch(`${gw.url}/v1/images/generations`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "modelx-image-2", ...fields }),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const sent = upstream.last();
    expect(sent.path).toBe("/v1/images/generations");
    expect(sent.headers["content-type"]).toBe("application/json");
    expectValid(GenerationRequestSchema, sent.json);
    expect(sent.json).toMatchObject({ model: "upstream-image-2", prompt: "a kite" });
  });
});

describe("edits toward an OpenAI images upstream", () => {
  async function edit(fields: Record<string, string>, files: [string, Uint8Array, string][]) {
    upstream.clear();
    const form = new FormData();
    form.append("model", "modelx-image-2");
    form.append("prompt", "paint it blue");
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    // The client's own names and types are deliberately unhelpful: the gateway must sniff the bytes.
    for (const [name, bytes, filename] of files) form.append(name, new Blob([bytes]), filename);
    const response = await fetch(`${gw.url}/v1/images/edits`, { method: "POST", headers: auth, body: form });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const sent = upstream.last();
    expect(sent.path).toBe("/v1/images/edits");
    if (sent.form === undefined) throw new Error("the upstream got no multipart form");
    return splitForm(sent.form);
  }

  test.each([
    ["one png, no mask", {}, [["image", flatPng(64, 64), "upload"]]],
    [
      "one png with a mask",
      { quality: "low" },
      [
        ["image", flatPng(64, 64), "a"],
        ["mask", halfMask(64, 64), "m"],
      ],
    ],
    [
      "streamed, with a mask",
      { stream: "true", partial_images: "1" },
      [
        ["image", flatPng(64, 64), "a.bin"],
        ["mask", halfMask(64, 64), "m.bin"],
      ],
    ],
  ] as [string, Record<string, string>, [string, Uint8Array, string][]][])(
    "%s: fields and typed file parts pass the strict schema",
    async (_label, fields, files) => {
      const sent = await edit(fields, files);
      expect(sent.repeated).toEqual([]);
      expectValid(EditFieldsSchema, sent.fields);
      expectValid(EditFilesSchema, sent.files);
      expect(sent.fields.model).toBe("upstream-image-2");
      const mask = sent.files.find((f) => f.field === "mask");
      expect(mask === undefined).toBe(!files.some(([name]) => name === "mask"));
      if (mask) expect([mask.type, mask.filename]).toEqual(["image/png", "mask.png"]);
    },
  );

  test("several images of three formats, streamed: image[] parts typed by their bytes", async () => {
    const sent = await edit({ stream: "true", output_format: "webp", output_compression: "70" }, [
      ["image[]", flatPng(64, 64), "one"],
      ["image[]", jpeg, "two.png"],
      ["image[]", webp, "three"],
      ["mask", halfMask(64, 64), "mask.jpg"],
    ]);
    expectValid(EditFieldsSchema, sent.fields);
    expectValid(EditFilesSchema, sent.files);
    const bytes = await Promise.all(sent.bytes);
    const images = sent.files.map((file, i) => ({ file, format: sniffFormat(bytes[i] ?? new Uint8Array()) }));
    expect(images.map(({ file }) => [file.field, file.type, file.filename])).toEqual([
      ["image[]", "image/png", "image-0.png"],
      ["image[]", "image/jpeg", "image-1.jpg"],
      ["image[]", "image/webp", "image-2.webp"],
      ["mask", "image/png", "mask.png"],
    ]);
    for (const { file, format } of images) expect(file.type).toBe(MIME[format ?? "png"]);
  });

  test("the strict schemas refuse what the API refuses", () => {
    const octet = [{ field: "image", type: "application/octet-stream", filename: "image-0.png", size: 10 }];
    expect(v.safeParse(EditFilesSchema, octet).success).toBe(false);
    const misnamed = [{ field: "image", type: "image/jpeg", filename: "image-0.png", size: 10 }];
    expect(v.safeParse(EditFilesSchema, misnamed).success).toBe(false);
    expect(v.safeParse(EditFieldsSchema, { prompt: "x", moderation: "low" }).success).toBe(false);
    expect(v.safeParse(GenerationRequestSchema, { prompt: "x", partial_images: 1 }).success).toBe(false);
    expect(
      v.safeParse(GenerationRequestSchema, { prompt: "x", output_format: "png", output_compression: 100 })
        .success,
    ).toBe(false);
  });
});

describe("an upstream answering 200 with text that is not JSON", () => {
  test.each([
    ["result", false, () => new Response("<html>busy</html>", { headers: { "content-type": "text/html" } })],
    [
      "stream event",
      true,
      () =>
        new Response("event: image_generation.partial_image\ndata: {oops\n\n", {
          headers: { "content-type": "text/event-stream" },
        }),
    ],
  ])("%s: the client gets 502 upstream_failed, not an internal error", async (_label, stream, bad) => {
    upstream.answer(bad);
    try {
      const response = await fetch(`${gw.url}/v1/images/generations`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ model: "modelx-image-2", prompt: "a kite", stream }),
      });
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(response.status).toBe(502);
      expect(body.error.code).toBe("upstream_failed");
      expect(body.error.message).toContain("not JSON");
    } finally {
      upstream.answer(answer);
    }
  });
});

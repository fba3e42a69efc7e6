// The edit upload reader: image / image[] / mask parts, recognition by bytes, and per-file caps
// enforced while the body streams in (the rest of an oversized body is never read).
import { describe, expect, test } from "bun:test";
import { MAX_FILE_BYTES, readImageUpload } from "../../src/handlers/images-upload.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { flatPng, halfMask } from "./images-fixtures.ts";

function formRequest(form: FormData): Request {
  return new Request("http://gateway.test/v1/images/edits", { method: "POST", body: form });
}

async function refusal(request: Request): Promise<GatewayError> {
  try {
    await readImageUpload(request);
  } catch (thrown) {
    if (thrown instanceof GatewayError) return thrown;
    throw thrown;
  }
  throw new Error("upload accepted");
}

/** A multipart body streamed in 1 MiB chunks, counting how many bytes the reader pulled. */
function streamedUpload(fileBytes: number, field: string): { request: Request; pulled: () => number } {
  const boundary = "----imagesTestBoundary";
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nhat\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="x.png"\r\nContent-Type: image/png\r\n\r\n`,
  );
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const png = flatPng(8, 8);
  let sent = 0;
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === 0) {
        controller.enqueue(head);
        controller.enqueue(png);
        sent = png.length;
        pulled += head.length + png.length;
        return;
      }
      if (sent >= fileBytes) {
        controller.enqueue(tail);
        controller.close();
        return;
      }
      const chunk = new Uint8Array(Math.min(1 << 20, fileBytes - sent));
      sent += chunk.length;
      pulled += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const request = new Request("http://gateway.test/v1/images/edits", {
    method: "POST",
    body,
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  });
  return { request, pulled: () => pulled };
}

describe("edit uploads", () => {
  test("image, image[] and mask are recognised by bytes whatever name and type they claim", async () => {
    const form = new FormData();
    form.append("prompt", "hat");
    form.append("image", new Blob([flatPng(16, 16)], { type: "text/plain" }), "notes.txt");
    form.append("image[]", new Blob([flatPng(8, 8)], { type: "image/jpeg" }), "photo.jpg");
    form.append("mask", new Blob([halfMask(16, 16)]), "mask.bin");
    const upload = await readImageUpload(formRequest(form));
    expect(upload.fields).toEqual({ prompt: "hat" });
    expect(upload.images.map((i) => [i.info.format, i.info.width])).toEqual([
      ["png", 16],
      ["png", 8],
    ]);
    expect(upload.mask?.info).toEqual({ format: "png", width: 16, height: 16, hasAlpha: true });
  });

  test("a file that is not PNG, JPEG or WebP is a 400 naming the field", async () => {
    const form = new FormData();
    form.append("image", new Blob(["GIF89a not really"], { type: "image/png" }), "a.png");
    const error = await refusal(formRequest(form));
    expect([error.status, error.param]).toEqual([400, "image"]);
  });

  test("a non-multipart body is a 400", async () => {
    const request = new Request("http://gateway.test/", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect((await refusal(request)).status).toBe(400);
  });

  for (const field of ["image", "mask"]) {
    test(`a ${field} of 20 MB + 1 byte is 413 and the rest of the body is never read`, async () => {
      const oversized = streamedUpload(MAX_FILE_BYTES + 1 + 40 * (1 << 20), field);
      const error = await refusal(oversized.request);
      expect([error.status, error.param]).toEqual([413, field]);
      expect(oversized.pulled()).toBeLessThan(MAX_FILE_BYTES + 4 * (1 << 20));
      const exact = streamedUpload(MAX_FILE_BYTES + 1, field);
      expect((await refusal(exact.request)).status).toBe(413);
    });
  }

  test("a file of exactly 20 MB is accepted by the size check", async () => {
    const { request } = streamedUpload(MAX_FILE_BYTES, "image");
    const upload = await readImageUpload(request);
    expect(upload.images[0]?.bytes.length).toBe(MAX_FILE_BYTES);
  });
});

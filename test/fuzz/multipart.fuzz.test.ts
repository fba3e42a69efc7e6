// Property tests of the image-edit upload reader (src/handlers/images-upload.ts; issue 17,
// fuzzing): multipart bodies with parts in any order, any names, sizes and contents (whole,
// truncated or corrupted images, text, random bytes), cut short anywhere and delivered in any
// chunking, either resolve to checked images or fail with a 400/413 naming the problem — never
// another error and never a hang. Fixed seed (FUZZ_SEED overrides it).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readImageUpload } from "../../src/handlers/images-upload.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { sniffImage } from "../../src/wire/images-sniff.ts";
import { flatPng, halfMask } from "../unit/images-fixtures.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 170_004);
const RUNS = 150;
const encoder = new TextEncoder();
const PNG = flatPng(16, 16);
const MASK = halfMask(16, 16);

const content = fc.oneof(
  fc.constant(PNG),
  fc.constant(MASK),
  fc.nat({ max: PNG.length - 1 }).map((cut) => PNG.subarray(0, cut)),
  fc.tuple(fc.nat({ max: PNG.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, flip]) => {
    const copy = PNG.slice();
    copy[at] = (copy[at] ?? 0) ^ flip;
    return copy;
  }),
  fc.uint8Array({ maxLength: 200 }),
  fc.string({ maxLength: 40 }).map((s) => encoder.encode(s)),
);

const part = fc.record({
  name: fc.oneof(
    fc.constantFrom("image", "image[]", "mask", "prompt", "model", "size", "n"),
    fc.string({ maxLength: 8 }),
  ),
  file: fc.boolean(),
  content,
});

const BOUNDARY = "----fuzzboundary7MA4YWxkTrZu0gW";

function multipart(parts: readonly { name: string; file: boolean; content: Uint8Array }[]): Uint8Array {
  const pieces: Uint8Array[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name.replace(/["\r\n]/g, "_")}"${p.file ? '; filename="f.png"' : ""}`;
    const type = p.file ? "Content-Type: image/png\r\n" : "";
    pieces.push(
      encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`),
      p.content,
      encoder.encode("\r\n"),
    );
  }
  pieces.push(encoder.encode(`--${BOUNDARY}--\r\n`));
  return new Uint8Array(Buffer.concat(pieces));
}

/** A request whose body arrives in the chunks the cut points make. */
function requestOf(body: Uint8Array, cuts: readonly number[]): Request {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < body.length))].sort((a, b) => a - b);
  const chunks = [0, ...points].map((start, i) => body.subarray(start, points[i] ?? body.length));
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
  return new Request("http://localhost/v1/images/edits", {
    method: "POST",
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    body: stream,
  });
}

/** The reader's outcome, with a deadline: a hang is a failure too. */
async function outcome(
  request: Request,
): Promise<{ images: number; mask: boolean } | { status: number; message: string }> {
  const deadline = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error("upload reader hung")), 5000),
  );
  try {
    const upload = await Promise.race([readImageUpload(request), deadline]);
    for (const image of [...upload.images, ...(upload.mask ? [upload.mask] : [])]) {
      expect(sniffImage(image.bytes)).toEqual(image.info);
    }
    return { images: upload.images.length, mask: upload.mask !== undefined };
  } catch (thrown) {
    if (!(thrown instanceof GatewayError)) throw thrown;
    return { status: thrown.status, message: thrown.message };
  }
}

describe("multipart uploads", () => {
  test("any parts in any order, in any chunking, are read or refused with 400/413", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(part, { maxLength: 6 }),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 6 }),
        async (parts, cuts) => {
          const result = await outcome(requestOf(multipart(parts), cuts));
          if ("status" in result) expect([400, 413]).toContain(result.status);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("a body cut short anywhere is refused with 400, never read as complete", async () => {
    const body = multipart([
      { name: "prompt", file: false, content: encoder.encode("a hat") },
      { name: "image", file: true, content: PNG },
      { name: "mask", file: true, content: MASK },
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: body.length - 3 }),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 4 }),
        async (cut, cuts) => {
          const result = await outcome(requestOf(body.subarray(0, cut), cuts));
          expect(result).toMatchObject({ status: 400 });
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("whole images are read whatever the chunking", async () => {
    const body = multipart([
      { name: "mask", file: true, content: MASK },
      { name: "model", file: false, content: encoder.encode("modelx-image-2") },
      { name: "image[]", file: true, content: PNG },
      { name: "image[]", file: true, content: PNG },
    ]);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: body.length }), { maxLength: 10 }), async (cuts) => {
        expect(await outcome(requestOf(body, cuts))).toEqual({ images: 2, mask: true });
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

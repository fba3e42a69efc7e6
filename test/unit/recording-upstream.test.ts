// The recording upstream the contract and dialect tests rely on: it keeps what it receives and
// replays scripted bytes exactly, in the slices given.
import { afterAll, expect, test } from "bun:test";
import { byteSlices, startRecordingUpstream } from "../helpers/recording-upstream.ts";

const upstream = startRecordingUpstream(() => ({ chunks: byteSlices('data: {"a":"é"}\n\n', 3) }));
afterAll(() => upstream.stop());

test("records a JSON request and replays sliced bytes unchanged", async () => {
  const answer = await fetch(`${upstream.url}/v1/chat/completions?x=1`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer up" },
    body: JSON.stringify({ model: "m", n: 1 }),
  });
  expect(await answer.text()).toBe('data: {"a":"é"}\n\n');
  const seen = upstream.last();
  expect(seen.path).toBe("/v1/chat/completions?x=1");
  expect(seen.headers.authorization).toBe("Bearer up");
  expect(seen.json).toEqual({ model: "m", n: 1 });
});

test("parses a multipart request into its parts", async () => {
  const form = new FormData();
  form.append("prompt", "p");
  form.append("image", new Blob([new Uint8Array([1, 2])], { type: "image/png" }), "a.png");
  await fetch(`${upstream.url}/v1/images/edits`, { method: "POST", body: form });
  const image = upstream.last().form?.get("image");
  expect(image).toBeInstanceOf(File);
  expect((image as File).type).toBe("image/png");
  expect(upstream.last().form?.get("prompt")).toBe("p");
});

test("byteSlices cuts inside a multi-byte character", () => {
  const slices = byteSlices("é", 1);
  expect(slices.length).toBe(2);
});

// Multipart text fields are UTF-8 (src/handlers/images-upload.ts `fieldText`): read from the
// parser as bytes, decoded strictly; non-ASCII text arrives unchanged, invalid bytes are a 400.
import { expect, test } from "bun:test";
import { readImageUpload } from "../../src/handlers/images-upload.ts";
import { GatewayError } from "../../src/wire/errors.ts";
import { flatPng } from "./images-fixtures.ts";

function upload(prompt: string | Uint8Array): Promise<Awaited<ReturnType<typeof readImageUpload>>> {
  const form = new FormData();
  form.append("prompt", typeof prompt === "string" ? prompt : new Blob([prompt]));
  form.append("image", new Blob([flatPng(8, 8)]), "a.png");
  return readImageUpload(new Request("http://x/v1/images/edits", { method: "POST", body: form }));
}

test("UTF-8 text beyond ASCII arrives unchanged, as a plain field and as a bare part", async () => {
  const text = "café ☕ 帽子 👒";
  expect((await upload(text)).fields.prompt).toBe(text);
  expect((await upload(new TextEncoder().encode(text))).fields.prompt).toBe(text);
});

test("bytes that are not UTF-8 are a 400 naming the field", async () => {
  const refused = await upload(new Uint8Array([0x68, 0xc3, 0x28])).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(GatewayError);
  expect((refused as GatewayError).param).toBe("prompt");
});

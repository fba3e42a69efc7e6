// Multipart text fields in invalid UTF-8 (issue 25 item 6): an image edit whose prompt bytes are
// not UTF-8 is refused with 400 naming the field, as a JSON body is, and nothing is billed; a
// UTF-8 prompt with characters beyond ASCII still passes unchanged. Through the compiled binary
// (default config: the in-process simulator).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { balanceOf, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { flatPng } from "../unit/images-fixtures.ts";

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway();
});

afterAll(async () => {
  await gw.dispose();
});

/** An edit whose prompt part carries `prompt` as raw bytes (a Blob, so no encoder touches it). */
function edit(prompt: Uint8Array): Promise<Response> {
  const form = new FormData();
  form.append("model", "modelx-image-2");
  form.append("size", "64x64");
  form.append("prompt", new Blob([prompt]));
  form.append("image", new Blob([flatPng(64, 64)]), "image.png");
  return fetch(`${gw.url}/v1/images/edits`, {
    method: "POST",
    headers: { authorization: `Bearer ${gw.key}` },
    body: form,
  });
}

test("a prompt that is not UTF-8 is a 400 naming prompt, and nothing is billed", async () => {
  const secret = gw.key ?? "";
  const before = await balanceOf(gw, secret);
  const res = await edit(new Uint8Array([0x61, 0xff, 0xfe, 0x62, 0xc3]));
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: { param: string; message: string } };
  expect(body.error.param).toBe("prompt");
  expect(body.error.message).toContain("UTF-8");
  const after = await balanceOf(gw, secret);
  expect(after.balance_nanos).toBe(before.balance_nanos);
  expect(after.spent_today_nanos).toBe(before.spent_today_nanos);
});

test("a UTF-8 prompt beyond ASCII passes", async () => {
  const res = await edit(new TextEncoder().encode("give it a café hat ☕ 帽子"));
  expect(res.status).toBe(200);
  await res.arrayBuffer();
});

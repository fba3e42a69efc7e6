// A large body's buffer reserves what its declared length allows, not the route's cap.
import { expect, test } from "bun:test";
import { readBody } from "../../src/request/body.ts";
import { CappedBuffer } from "../../src/request/capped.ts";

const CAP = 32 * 1024 * 1024;

function post(body: Uint8Array, declared: boolean): Request {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (declared) headers["content-length"] = String(body.byteLength);
  return new Request("http://gateway.test/v1/chat/completions", { method: "POST", body, headers });
}

test("a declared 200 KB body is held in a buffer that reserves 200 KB, not the 32 MiB cap", async () => {
  const sent = new Uint8Array(200_000).fill(0x61);
  const bytes = await readBody(post(sent, true), CAP);
  expect(bytes).toEqual(sent);
  expect((bytes.buffer as ArrayBuffer).maxByteLength).toBe(200_000);
});

test("a buffer given more than its declared length moves once into one that may grow to the cap", () => {
  const buffer = new CappedBuffer(1000, 100, 100);
  expect(buffer.append(new Uint8Array(80).fill(1))).toBe(true);
  expect((buffer.bytes().buffer as ArrayBuffer).maxByteLength).toBe(100);
  expect(buffer.append(new Uint8Array(70).fill(2))).toBe(true);
  const bytes = buffer.bytes();
  expect(bytes.byteLength).toBe(150);
  expect(bytes[79]).toBe(1);
  expect(bytes[80]).toBe(2);
  expect((bytes.buffer as ArrayBuffer).maxByteLength).toBe(1000);
  expect(buffer.append(new Uint8Array(851))).toBe(false);
  expect(buffer.append(new Uint8Array(850))).toBe(true);
});

test("a body of unknown length still grows up to the cap", () => {
  const buffer = new CappedBuffer(200_000);
  for (let i = 0; i < 3; i++) expect(buffer.append(new Uint8Array(60_000).fill(i))).toBe(true);
  expect(buffer.bytes().byteLength).toBe(180_000);
  expect(buffer.append(new Uint8Array(20_001))).toBe(false);
});

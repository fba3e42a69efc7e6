// The token thread's batch form: texts long in all are counted off the calling thread, each count
// in its text's place and equal to the tokenizer's; short ones in place; the single-text form on
// the same path.
import { expect, spyOn, test } from "bun:test";
import { RequestThread } from "../../src/base/thread.ts";
import { findModel } from "../../src/catalog/models.ts";
import { countEachTokens, countPromptTokens, INLINE_COUNT_CHARS } from "../../src/catalog/token-thread.ts";
import { countTokens } from "../../src/catalog/tokenizer.ts";
import { countInputs } from "../../src/handlers/embeddings.ts";

const texts = [
  "short",
  "a".repeat(20_000),
  Array.from({ length: 3000 }, (_, i) => `w${i % 97}`).join(" "),
  "数字 123456 and émoji 🙂 ".repeat(500),
  "x",
];

test("a batch long in all: each text's exact count, in order", async () => {
  expect(texts.join("").length).toBeGreaterThan(INLINE_COUNT_CHARS);
  expect(await countEachTokens(texts)).toEqual(texts.map(countTokens));
  // Asked again (the simulator recounting what the gateway counted): the same counts.
  expect(await countEachTokens([...texts])).toEqual(texts.map(countTokens));
});

test("a short batch, an empty one and a single long prompt", async () => {
  const short = ["alpha beta", "gamma"];
  expect(await countEachTokens(short)).toEqual(short.map(countTokens));
  expect(await countEachTokens([])).toEqual([]);
  const long = texts[2] ?? "";
  expect(await countPromptTokens(long)).toBe(countTokens(long));
});

test("a count limited to a context stops past it, and is not remembered as the text's count", async () => {
  const long = texts[3] ?? "";
  const exact = countTokens(long);
  expect(await countPromptTokens(long, 100)).toBeGreaterThan(100);
  expect(await countPromptTokens(long, exact)).toBe(exact);
  expect(await countPromptTokens(`${long} `, 100)).toBeGreaterThan(100);
  expect(await countPromptTokens(`${long} `)).toBe(countTokens(`${long} `));
});

test("long counts are served a key at a time: one key's queue holds another's count behind one of its own", async () => {
  const order: string[] = [];
  const count = (owner: string, label: string, text: string) =>
    countPromptTokens(text, undefined, owner).then(() => order.push(label));
  // Distinct texts (none remembered), each long enough for the thread.
  const long = (i: number) => `${i} ${"word ".repeat(3_000)}`;
  const all = [
    ...[1, 2, 3, 4, 5].map((i) => count("hostile", `a${i}`, long(i))),
    count("honest", "b1", long(100)),
  ];
  await Promise.all(all);
  // In arrival order b1 came last; in turns it comes after the count in the thread and one more.
  expect(order.indexOf("b1")).toBeLessThanOrEqual(2);
  expect(order.filter((label) => label.startsWith("a"))).toEqual(["a1", "a2", "a3", "a4", "a5"]);
});

test("a count the thread could not be sent fails alone: the counts after it are still served", async () => {
  const long = "word ".repeat(INLINE_COUNT_CHARS / 4);
  const open = spyOn(RequestThread.prototype, "open").mockImplementationOnce(() => {
    throw new Error("no thread could be started");
  });
  try {
    await expect(countPromptTokens(long, undefined, "key_a")).rejects.toThrow("no thread could be started");
  } finally {
    open.mockRestore();
  }
  expect(await countPromptTokens(`${long}!`, undefined, "key_a")).toBe(countTokens(`${long}!`));
});

test("embedding inputs are counted in their key's turn too", async () => {
  const model = findModel("modelx-embed-3-small");
  if (model === undefined) throw new Error("no embedding model in the catalog");
  const order: string[] = [];
  const long = (i: number) => `${i} ${"word ".repeat(3_000)}`;
  const all = [
    ...[1, 2, 3, 4, 5].map((i) =>
      countInputs(model, { kind: "text", items: [long(200 + i)] }, "hostile").then(() => order.push(`a${i}`)),
    ),
    countInputs(model, { kind: "text", items: [long(300)] }, "honest").then(() => order.push("b1")),
  ];
  await Promise.all(all);
  expect(order.indexOf("b1")).toBeLessThanOrEqual(2);
});

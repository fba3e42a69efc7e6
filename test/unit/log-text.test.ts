// The text log format (`server.log_format = "text"`): values that would break the line or drive
// the operator's terminal (an upstream's error text with escape sequences) are quoted and escaped.
import { expect, test } from "bun:test";
import { textFields } from "../../src/base/log.ts";

test("plain values stay bare, values with spaces, quotes or = are JSON-quoted, absent ones skipped", () => {
  expect(textFields({ status: 200, path: "/v1/models", code: undefined })).toBe(
    " status=200 path=/v1/models",
  );
  expect(textFields({ error: 'bad "x" = y' })).toBe(' error="bad \\"x\\" = y"');
  expect(textFields({ empty: "" })).toBe(' empty=""');
});

test("control characters never reach the terminal raw: C0, DEL and C1 are escaped", () => {
  const hostile = "ok\u001b[2J\u001b]0;owned\u0007\u007f\u009b31m";
  const shown = textFields({ error: hostile });
  for (let i = 0; i < shown.length; i++) {
    const unit = shown.charCodeAt(i);
    expect({ at: i, control: unit < 0x20 || (unit >= 0x7f && unit <= 0x9f) }).toEqual({
      at: i,
      control: false,
    });
  }
  expect(shown).toBe(' error="ok\\u001b[2J\\u001b]0;owned\\u0007\\u007f\\u009b31m"');
  // The quoted value reads back as the original text.
  expect(JSON.parse(shown.slice(" error=".length))).toBe(hostile);
});

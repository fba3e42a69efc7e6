// The form's reducer: text as it arrives in one read, applied key by key to the state the key
// before left — Backspace deletes, a carriage return moves on or, on the last field, submits the
// values typed before it (what follows it is not typed) — and each submit is a new submission.
import { expect, test } from "bun:test";
import { formReducer } from "../../admin-tui/form.tsx";

const empty = {
  names: ["name", "rpm"],
  values: { name: "", rpm: "" },
  focus: 0,
  submitted: undefined,
};

test("a burst of keys in one read: typed, deleted, moved on and submitted in order", () => {
  const after = formReducer(empty, { kind: "text", text: "ab\x7fc\r\n12\b3\rlost" });
  expect(after.submitted).toEqual({ name: "ac", rpm: "13" });
  expect(after.values).toEqual({ name: "ac", rpm: "13" });
  expect(after.focus).toBe(1);
});

test("moves stay within the fields; Enter again submits again, as a new submission", () => {
  const moved = formReducer(formReducer(empty, { kind: "move", by: -1 }), { kind: "move", by: 1 });
  expect(moved.focus).toBe(1);
  expect(formReducer(moved, { kind: "move", by: 1 }).focus).toBe(1);
  const first = formReducer(moved, { kind: "text", text: "\r" });
  const second = formReducer(first, { kind: "text", text: "\r" });
  expect(second.submitted).toEqual(first.submitted);
  expect(second.submitted).not.toBe(first.submitted);
});

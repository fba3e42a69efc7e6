// A small keyboard form: type into the focused field, ↑/↓ or Tab to move, Enter on the last
// field submits, Esc cancels. Used by every create/edit action of the screens.
import { Box, Text, useInput } from "ink";
import { useRef, useState } from "react";
import { colorProp } from "./color.ts";

export interface Field {
  name: string;
  label: string;
  value?: string;
  hint?: string;
}

interface Props {
  title: string;
  fields: Field[];
  onSubmit: (values: Record<string, string>) => void;
  onCancel: () => void;
  error?: string | undefined;
}

export function Form({ title, fields, onSubmit, onCancel, error }: Props) {
  // State lives in a ref as well: keys typed faster than a render (a paste, a script) must each
  // see the effect of the previous one.
  const state = useRef({
    values: Object.fromEntries(fields.map((f) => [f.name, f.value ?? ""])) as Record<string, string>,
    focus: 0,
  });
  const [, rerender] = useState(0);
  const update = (values: Record<string, string>, focus: number) => {
    state.current = { values, focus };
    rerender((n) => n + 1);
  };
  useInput((input, key) => {
    const { values, focus } = state.current;
    const field = fields[focus];
    if (!field) return;
    if (key.escape) return onCancel();
    if (key.upArrow) return update(values, Math.max(0, focus - 1));
    if (key.downArrow || key.tab) return update(values, Math.min(fields.length - 1, focus + 1));
    if (key.return) {
      if (focus === fields.length - 1) return onSubmit(values);
      return update(values, focus + 1);
    }
    if (key.backspace || key.delete) {
      return update({ ...values, [field.name]: (values[field.name] ?? "").slice(0, -1) }, focus);
    }
    if (input && !key.ctrl && !key.meta) typed(input);
  });
  /**
   * Text as it arrives in one read: a paste, or keys typed faster than a render. Every key of it
   * counts, in order — a carriage return acts as Enter and a Backspace (DEL or BS) deletes, since
   * a burst reaches the handler as one string, not as one key each.
   */
  const typed = (input: string) => {
    const keys = input.replace(/\r\n/g, "\r");
    for (const char of keys) {
      const { values, focus } = state.current;
      const field = fields[focus];
      if (!field) return;
      const value = values[field.name] ?? "";
      if (char === "\r" || char === "\n") {
        if (focus === fields.length - 1) return onSubmit(values);
        update(values, focus + 1);
      } else if (char === "\x7f" || char === "\b")
        update({ ...values, [field.name]: value.slice(0, -1) }, focus);
      else if (char >= " ") update({ ...values, [field.name]: value + char }, focus);
    }
  };
  const { values, focus } = state.current;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text bold>{title}</Text>
      {fields.map((f, i) => (
        <Box key={f.name}>
          <Text {...colorProp(i === focus ? "cyan" : undefined)}>
            {i === focus ? "› " : "  "}
            {f.label.padEnd(16)}
          </Text>
          <Text inverse={i === focus}>{values[f.name] || " "}</Text>
          {f.hint && i === focus ? <Text dimColor> {f.hint}</Text> : null}
        </Box>
      ))}
      {error ? <Text color="red">{error}</Text> : null}
      <Text dimColor>Enter next/submit · ↑↓ move · Esc cancel</Text>
    </Box>
  );
}

/** "" → null (clear), otherwise the text. */
export function optional(text: string | undefined): string | null {
  const t = (text ?? "").trim();
  return t === "" ? null : t;
}

/** "" → null, otherwise a whole number (NaN makes the API answer with a field-named error). */
export function optionalInt(text: string | undefined): number | null {
  const t = optional(text);
  return t === null ? null : Number(t);
}

/** "10.0.0.0/8, 1.2.3.4" → ["10.0.0.0/8", "1.2.3.4"]. */
export function list(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

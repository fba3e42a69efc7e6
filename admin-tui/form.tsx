// A small keyboard form: type into the focused field, ↑/↓ or Tab to move, Enter on the last
// field submits, Esc cancels. Used by every create/edit action of the screens.
import { Box, Text, useInput } from "ink";
import { useEffect, useEffectEvent, useReducer } from "react";
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

interface FormState {
  /** The fields' names, in order. */
  names: readonly string[];
  values: Record<string, string>;
  focus: number;
  /** The values sent by the last submit: a new object each time, handed to `onSubmit` after it. */
  submitted: Record<string, string> | undefined;
}

/** A move of the focus, or text as it arrives in one read (a key, a paste, a burst of keys). */
type FormAction = { kind: "move"; by: 1 | -1 } | { kind: "text"; text: string };

function start(fields: readonly Field[]): FormState {
  return {
    names: fields.map((f) => f.name),
    values: Object.fromEntries(fields.map((f) => [f.name, f.value ?? ""])),
    focus: 0,
    submitted: undefined,
  };
}

/**
 * The form after `action`. React applies actions in order, each to the state the one before left,
 * so keys typed faster than a render (a paste, a script) each see the effect of the previous one.
 * Every key of a text counts, in order — a carriage return acts as Enter (the next field, or a
 * submit on the last) and a Backspace (DEL or BS) deletes — since a burst reaches the input
 * handler as one string, not as one key each.
 */
export function formReducer(state: FormState, action: FormAction): FormState {
  const last = state.names.length - 1;
  if (last < 0) return state;
  if (action.kind === "move")
    return { ...state, focus: Math.min(last, Math.max(0, state.focus + action.by)) };
  let { values, focus } = state;
  for (const char of action.text.replace(/\r\n/g, "\r")) {
    const name = state.names[focus];
    if (name === undefined) break;
    const value = values[name] ?? "";
    if (char === "\r" || char === "\n") {
      if (focus === last) return { ...state, values, focus, submitted: { ...values } };
      focus += 1;
    } else if (char === "\x7f" || char === "\b") values = { ...values, [name]: value.slice(0, -1) };
    else if (char >= " ") values = { ...values, [name]: value + char };
  }
  return { ...state, values, focus };
}

export function Form({ title, fields, onSubmit, onCancel, error }: Props) {
  const [{ values, focus, submitted }, dispatch] = useReducer(formReducer, fields, start);
  const submit = useEffectEvent((sent: Record<string, string>) => onSubmit(sent));
  useEffect(() => {
    if (submitted) submit(submitted);
  }, [submitted]);
  useInput((input, key) => {
    if (key.escape) return onCancel();
    if (key.upArrow) return dispatch({ kind: "move", by: -1 });
    if (key.downArrow || key.tab) return dispatch({ kind: "move", by: 1 });
    if (key.return) return dispatch({ kind: "text", text: "\r" });
    if (key.backspace || key.delete) return dispatch({ kind: "text", text: "\x7f" });
    if (input && !key.ctrl && !key.meta) dispatch({ kind: "text", text: input });
  });
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

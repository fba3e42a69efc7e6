// The contract of every conversion to and from the internal form (text-form.ts), after Helicone
// ai-gateway's TryConvert / TryConvertStreamData: a conversion of data an upstream sent returns
// the converted value or a typed error and never throws; a stream has its own per-event converter
// (ReplyReader) and writer (ReplyWriter). Requests from clients are converted after their wire
// schema accepted them, so those conversions are total.
import { isObject } from "../../base/plain-object.ts";
import type { IrEvent, IrReply } from "../text-form.ts";
import type { Obj } from "./narrow.ts";

/** Why data from an upstream could not be read into the internal form. */
export interface ConvertError {
  /** `missing_field`: a field the protocol requires is absent (reply-check.ts); the message names it. */
  kind: "not_json" | "not_object" | "missing_field";
  message: string;
}

/** A conversion's result: the value, or why there is none. */
export type Converted<T> = { ok: true; value: T } | { ok: false; error: ConvertError };

const NOT_JSON: Converted<never> = {
  ok: false,
  error: { kind: "not_json", message: "the data is not valid JSON" },
};
const NOT_OBJECT: Converted<never> = {
  ok: false,
  error: { kind: "not_object", message: "the data is JSON but not an object" },
};

/** A JSON value as an object, or the typed error. */
export function asObject(value: unknown): Converted<Obj> {
  return isObject(value) ? { ok: true, value } : NOT_OBJECT;
}

/** Parses JSON text into an object, or the typed error (no throw escapes). */
export function readObject(data: string): Converted<Obj> {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return NOT_JSON;
  }
  return asObject(value);
}

/** Nothing to emit for an event (shared: readers return it for events they pass over). */
export const NO_EVENTS: Converted<readonly IrEvent[]> = { ok: true, value: Object.freeze([]) };

/**
 * The internal events of one read, none for an event that could not be read: translation passes
 * such an event over (the native relay passes it through untouched; there is nothing to rewrite).
 */
export function eventsOf(read: Converted<readonly IrEvent[]>): readonly IrEvent[] {
  return read.ok ? read.value : NO_EVENTS_LIST;
}
const NO_EVENTS_LIST: readonly IrEvent[] = Object.freeze([]);

/** The events that stream a complete reply (used to render non-stream answers with the stream writers). */
export function replyEvents(reply: IrReply): IrEvent[] {
  const events: IrEvent[] = [{ type: "start", id: reply.id, model: reply.model, usage: reply.usage }];
  reply.parts.forEach((part, index) => {
    switch (part.type) {
      case "text":
      case "refusal":
        events.push({ type: "part_start", index, part: { type: part.type } });
        if (part.text !== "") events.push({ type: "text", index, text: part.text });
        break;
      case "thinking":
        events.push({ type: "part_start", index, part: { type: "thinking" } });
        if (part.text !== "") events.push({ type: "thinking", index, text: part.text });
        if (part.signature) events.push({ type: "signature", index, signature: part.signature });
        break;
      case "redacted_thinking":
        events.push({ type: "part_start", index, part: { type: "redacted_thinking", data: part.data } });
        break;
      case "tool_call":
        events.push(
          { type: "part_start", index, part: { type: "tool_call", id: part.id, name: part.name } },
          { type: "arguments", index, json: part.arguments },
        );
        break;
      default:
        return;
    }
    events.push({ type: "part_stop", index });
  });
  events.push({ type: "finish", stop: reply.stop, stopSequence: reply.stopSequence, usage: reply.usage });
  return events;
}

/**
 * The reader of a protocol whose events are JSON objects: `event` converts one, after its data was
 * read as an object; data that is not one is the typed error. Once `done`, events are passed over.
 */
export abstract class JsonReplyReader implements ReplyReader {
  protected done = false;

  read(name: string | undefined, data: string): Converted<readonly IrEvent[]> {
    if (this.done) return NO_EVENTS;
    const event = readObject(data);
    return event.ok ? { ok: true, value: this.event(name, event.value) } : event;
  }

  protected abstract event(name: string | undefined, event: Obj): IrEvent[];

  end(): IrEvent[] {
    return [];
  }
}

/** A reply writer: turns internal events into one protocol's SSE bytes and its complete answer. */
export interface ReplyWriter {
  push(event: IrEvent): Uint8Array[];
  /** The complete answer object (non-stream body) built from the events so far. */
  answer(): Record<string, unknown>;
}

/**
 * A reply reader (`TryConvertStreamData`): one protocol's SSE events into internal events. An
 * event whose data is not a JSON object is a typed error, never a throw.
 */
export interface ReplyReader {
  read(name: string | undefined, data: string): Converted<readonly IrEvent[]>;
  /** Events to close the reply when the upstream stream ended (empty if it ended properly). */
  end(): IrEvent[];
}

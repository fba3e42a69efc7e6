// Translation of an upstream answer into the client's protocol on the relay path: a complete JSON
// answer rewritten through the internal form, or an SSE stream translated event by event by a
// stateful reader/writer pair (each upstream event is written out as soon as it is read; nothing
// waits for the end of the stream).
import { createParser } from "eventsource-parser";
import { GatewayError } from "../../wire/errors.ts";
import { SseFeed } from "../../wire/sse.ts";
import type { TextProtocol } from "../../wire/text-form.ts";
import { eventsOf } from "../../wire/translate/convert.ts";
import { replyReader, replyWriter, tryTranslateAnswer } from "../../wire/translate/index.ts";
import type { Obj } from "../../wire/translate/narrow.ts";
import { MAX_EVENT_BYTES } from "./stream.ts";
import { UsageTap } from "./tap.ts";

export interface Translation {
  from: TextProtocol;
  to: TextProtocol;
  /** The model id the client asked for (answers name it, not the upstream's id). */
  model: string;
  /** The gateway's count of the prompt, for protocols that report input usage before the answer. */
  inputEstimate: number;
  /** The client's request body: a Responses answer echoes its parameters (instructions, tools, …). */
  request: Obj;
}

const encoder = new TextEncoder();

/** The upstream's complete JSON answer as the client protocol's answer bytes (502 when unreadable). */
export function translateJson(t: Translation, channel: string, upstream: unknown): Uint8Array {
  const answer = tryTranslateAnswer(t.from, t.to, upstream, t.model, t.inputEstimate, t.request);
  if (!answer.ok) {
    throw new GatewayError(
      "upstream_failed",
      `Channel "${channel}" answered with something that is not a ${t.from} answer (${answer.error.message}). Retry the request.`,
    );
  }
  return encoder.encode(JSON.stringify(answer.value));
}

export interface TranslatedStream {
  /** The client protocol's event bytes. */
  body: ReadableStream<Uint8Array>;
  /** A tap on the upstream's own events: billing takes its usage, with counts a translation cannot carry (cache writes). */
  usage: UsageTap;
}

/**
 * A byte stream of the upstream's SSE events rewritten, event by event, in the client's protocol.
 * An upstream event that grows past `maxEventBytes` without ending errors the stream (the relay
 * then ends it as broken and the upstream is cancelled), so the parser never holds more.
 */
export function translateStream(
  t: Translation,
  body: ReadableStream<Uint8Array>,
  maxEventBytes = MAX_EVENT_BYTES,
): TranslatedStream {
  const usage = new UsageTap(t.from);
  const reader = replyReader(t.from);
  const writer = replyWriter(t.to, t.model, t.inputEstimate, t.request);
  const decoder = new TextDecoder();
  let out: TransformStreamDefaultController<Uint8Array> | undefined;
  /** Bytes fed since the last event was dispatched: what the parser may be holding. */
  let held = 0;
  const sse = new SseFeed(
    createParser({
      onEvent: (e) => {
        held = 0;
        usage.onEvent(e.event, e.data);
        for (const event of eventsOf(reader.read(e.event, e.data)))
          for (const bytes of writer.push(event)) out?.enqueue(bytes);
      },
    }),
  );
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      out = controller;
      // stream: true keeps a UTF-8 character cut between two chunks whole.
      sse.feed(decoder.decode(chunk, { stream: true }));
      held += chunk.byteLength;
      if (held > maxEventBytes) {
        controller.error(
          new Error(`the upstream sent an event larger than ${maxEventBytes} bytes without ending it`),
        );
      }
    },
    flush(controller) {
      out = controller;
      const rest = decoder.decode();
      if (rest !== "") sse.feed(rest);
      sse.end();
      for (const event of reader.end()) for (const bytes of writer.push(event)) controller.enqueue(bytes);
    },
  });
  return { body: body.pipeThrough(transform), usage };
}

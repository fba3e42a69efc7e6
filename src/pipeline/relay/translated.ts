// Translation of an upstream answer into the client's protocol on the relay path: a complete JSON
// answer rewritten through the internal form, or an SSE stream translated event by event by a
// stateful reader/writer pair (each upstream event is written out as soon as it is read; nothing
// waits for the end of the stream). A translated stream reports what the relay needs of the
// client's side itself: its tap knows what the writer wrote (its end, the Responses `created`),
// while its usage stays the upstream's own, read by the answer's reader from the upstream's events.
import { createParser } from "eventsource-parser";
import { protocolOf } from "../../protocols/index.ts";
import { replyReader, replyWriter, tryTranslateAnswer } from "../../protocols/translate.ts";
import type { StreamUsage } from "../../protocols/usage-reader.ts";
import { GatewayError } from "../../wire/errors.ts";
import { SseFeed } from "../../wire/sse.ts";
import type { IrEvent, TextProtocol } from "../../wire/text-form.ts";
import { eventsOf } from "../../wire/translate/convert.ts";
import type { Obj } from "../../wire/translate/narrow.ts";
import { MAX_EVENT_BYTES } from "./stream.ts";
import { readUsage, type StreamTap, type TappedUsage } from "./tap.ts";

export interface Translation {
  from: TextProtocol;
  to: TextProtocol;
  /** The model id the client asked for (answers name it, not the upstream's id). */
  model: string;
  /** The gateway's count of the prompt, for protocols that report input usage before the answer. */
  inputEstimate: number;
  /** The client's request body: a Responses answer echoes its parameters (instructions, tools, …). */
  request: Obj;
  /** Chat: whether the client asked for the usage chunk (`stream_options.include_usage`); default yes. */
  includeUsage?: boolean | undefined;
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
  /** The relay's tap: the client's side from what was written, usage from the upstream's events. */
  tap: TranslatedTap;
}

/** The tap of a translated stream (see the module header). */
export class TranslatedTap implements StreamTap {
  readonly protocol: TextProtocol;
  events = 0;
  created: Obj | undefined;
  /** The writer wrote the client protocol's end (a finish or an error). */
  ended = false;
  readonly #upstream: StreamUsage;

  constructor(protocol: TextProtocol, upstream: StreamUsage) {
    this.protocol = protocol;
    this.#upstream = upstream;
  }

  get complete(): boolean {
    return this.ended;
  }

  /** Counts the client's events; there is no usage chunk to drop (the writer wrote only what was asked). */
  onEvent(): boolean {
    this.events++;
    return false;
  }

  /** The upstream's own reasons, as a translated JSON answer reports them. */
  finishReasons(): string[] {
    return this.#upstream.finishReasons();
  }

  usage(inputTokens: number, outputCap: number): TappedUsage {
    return readUsage(this.#upstream, inputTokens, outputCap);
  }
}

/**
 * A byte stream of the upstream's SSE events rewritten, event by event, in the client's protocol,
 * while `reader` (the answer's usage reader, in the upstream's protocol) reads the upstream's
 * events. An upstream event that grows past `maxEventBytes` without ending errors the stream (the
 * relay then ends it as broken and the upstream is cancelled), so the parser never holds more.
 */
export function translateStream(
  t: Translation,
  body: ReadableStream<Uint8Array>,
  reader: StreamUsage,
  maxEventBytes = MAX_EVENT_BYTES,
): TranslatedStream {
  const tap = new TranslatedTap(t.to, reader);
  const ir = replyReader(t.from);
  const writer = replyWriter(t.to, t.model, t.inputEstimate, t.request, t.includeUsage ?? true);
  const startCarriesAnswer = protocolOf(t.to).translate.startCarriesAnswer;
  const decoder = new TextDecoder();
  let out: TransformStreamDefaultController<Uint8Array> | undefined;
  /** Bytes fed since the last event was dispatched: what the parser may be holding. */
  let held = 0;
  const write = (event: IrEvent, controller: TransformStreamDefaultController<Uint8Array> | undefined) => {
    for (const bytes of writer.push(event)) controller?.enqueue(bytes);
    if (event.type === "finish" || event.type === "error") tap.ended = true;
    // The start event carries the answer as it stands (Responses `response.created`).
    else if (event.type === "start" && startCarriesAnswer) tap.created = writer.answer();
  };
  const sse = new SseFeed(
    createParser({
      onEvent: (e) => {
        held = 0;
        reader.onEvent(e.event, e.data);
        for (const event of eventsOf(ir.read(e.event, e.data))) write(event, out);
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
      for (const event of ir.end()) write(event, controller);
    },
  });
  return { body: body.pipeThrough(transform), tap };
}

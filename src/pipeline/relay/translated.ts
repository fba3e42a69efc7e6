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
import type { BodyReader, SteppedReader } from "../../upstream/guard.ts";
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

type ReadResult = Awaited<ReturnType<BodyReader["read"]>>;

export interface TranslatedStream {
  /** The client protocol's event bytes. */
  body: ReadableStream<Uint8Array>;
  /** The relay's tap: the client's side from what was written, usage from the upstream's events. */
  tap: TranslatedTap;
}

/** A translated stream as a reader the relay reads directly (no stream between it and the upstream). */
export interface TranslatedReader {
  /** The client protocol's event bytes, one written event a read. */
  body: BodyReader;
  tap: TranslatedTap;
}

/** The tap of a translated stream (see the module header). */
export class TranslatedTap implements StreamTap {
  readonly protocol: TextProtocol;
  /** Events handed to the relay, counted by the translator (one written piece is one event). */
  events = 0;
  /** The relay need not parse what the writer wrote (a cache's CollectingTap around it still does). */
  readonly readsEvents = false;
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

  /** There is no usage chunk to drop (the writer wrote only what was asked); the events are counted as handed out. */
  onEvent(): boolean {
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
 * The upstream's SSE events rewritten, event by event, in the client's protocol, while `reader`
 * (the answer's usage reader, in the upstream's protocol) reads the upstream's events. A pull
 * reader over `source`: each read takes upstream chunks until the writer wrote something, so the
 * relay reads it with no stream in between (each ReadableStream hop costs a few µs an event). An
 * upstream event that grows past `maxEventBytes` without ending fails the read and cancels the
 * upstream (the relay then ends the stream as broken), so the parser never holds more.
 */
export function translateReader(
  t: Translation,
  source: BodyReader,
  reader: StreamUsage,
  maxEventBytes = MAX_EVENT_BYTES,
): TranslatedReader {
  const tap = new TranslatedTap(t.to, reader);
  const ir = replyReader(t.from);
  const writer = replyWriter(t.to, t.model, t.inputEstimate, t.request, t.includeUsage ?? true);
  const startCarriesAnswer = protocolOf(t.to).translate.startCarriesAnswer;
  const decoder = new TextDecoder();
  const guarded = "took" in source ? (source as SteppedReader) : undefined;
  /** Written event bytes not yet read, oldest first, from `next` on. */
  let out: Uint8Array[] = [];
  let next = 0;
  let ended = false;
  /** Bytes fed since the last event was dispatched: what the parser may be holding. */
  let held = 0;
  const write = (event: IrEvent) => {
    for (const bytes of writer.push(event)) out.push(bytes);
    if (event.type === "finish" || event.type === "error") tap.ended = true;
    // The start event carries the answer as it stands (Responses `response.created`).
    else if (event.type === "start" && startCarriesAnswer) tap.created = writer.answer();
  };
  const sse = new SseFeed(
    createParser({
      onEvent: (e) => {
        held = 0;
        reader.onEvent(e.event, e.data);
        for (const event of eventsOf(ir.read(e.event, e.data))) write(event);
      },
    }),
  );
  const take = (): ReadResult | undefined => {
    const bytes = out[next];
    if (bytes === undefined) return undefined;
    next++;
    // Every piece a writer returns is one SSE event with data (sseEvent, sseJson).
    tap.events++;
    if (next === out.length) {
      out = [];
      next = 0;
    }
    return { done: false, value: bytes };
  };
  const body: BodyReader = {
    async read() {
      for (;;) {
        const ready = take();
        if (ready !== undefined) return ready;
        if (ended) return { done: true };
        let step: ReadResult;
        if (guarded === undefined) step = await source.read();
        else {
          // The guarded body read without its async wrapper (as the relay reads it).
          try {
            step = guarded.took(await guarded.next());
          } catch (thrown) {
            throw guarded.failed(thrown);
          }
        }
        if (step.done) {
          ended = true;
          const rest = decoder.decode();
          if (rest !== "") sse.feed(rest);
          sse.end();
          for (const event of ir.end()) write(event);
          continue;
        }
        // stream: true keeps a UTF-8 character cut between two chunks whole.
        sse.feed(decoder.decode(step.value, { stream: true }));
        held += step.value.byteLength;
        if (held > maxEventBytes) {
          out = [];
          next = 0;
          ended = true;
          await source.cancel().catch(() => undefined);
          throw new Error(`the upstream sent an event larger than ${maxEventBytes} bytes without ending it`);
        }
      }
    },
    cancel: (reason) => source.cancel(reason),
  };
  return { body, tap };
}

/** translateReader over a byte stream, as a byte stream (for callers that hold streams). */
export function translateStream(
  t: Translation,
  body: ReadableStream<Uint8Array>,
  reader: StreamUsage,
  maxEventBytes = MAX_EVENT_BYTES,
): TranslatedStream {
  // A done read of a byte stream carries no value, as BodyReader says.
  const translated = translateReader(t, body.getReader() as BodyReader, reader, maxEventBytes);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const step = await translated.body.read();
      if (step.done) controller.close();
      else controller.enqueue(step.value);
    },
    cancel: (reason) => translated.body.cancel(reason),
  });
  return { body: stream, tap: translated.tap };
}

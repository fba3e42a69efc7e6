// What the relay hands the response cache (src/cache/, through the callback the text pipeline
// gives it): a complete answer in the client's protocol with the usage it settled and its cost —
// only when it is whole: ended by its proper last event, its usage reported by the upstream, not
// cut by the output cap and not a refusal. A stream's answer is rebuilt from the events the relay
// already parsed (CollectingTap), through the internal form, as the protocol's non-stream body.

import type { Nanos } from "../../base/types.ts";
import { replyReader, replyWriter } from "../../protocols/translate.ts";
import type { UsageSource } from "../../store/usage/record.ts";
import type { IrEvent, IrReply, IrStop, TextProtocol } from "../../wire/text-form.ts";
import type { ReplyReader, ReplyWriter } from "../../wire/translate/convert.ts";
import type { Obj } from "../../wire/translate/narrow.ts";
import type { UsageCounts } from "../../wire/usage-counts.ts";
import type { StreamTap, TappedUsage } from "./tap.ts";

export interface KeptAnswer {
  protocol: TextProtocol;
  /** The complete answer as its non-stream JSON body. */
  answer: string;
  usage: UsageCounts;
  costNanos: Nanos;
}

export type Keep = (answer: KeptAnswer) => void;

/** How an answer ended: why it stopped, and whether any part of it was a refusal. */
export interface AnswerEnd {
  stop: IrStop;
  refused: boolean;
}

/** An answer worth serving again: its usage reported, not cut short, not a refusal. */
export function storable(end: AnswerEnd, source: UsageSource): boolean {
  return source === "reported" && end.stop !== "length" && end.stop !== "refusal" && !end.refused;
}

/** How a complete answer (read into the internal form) ended. */
export function endOf(reply: IrReply): AnswerEnd {
  return { stop: reply.stop, refused: reply.parts.some((part) => part.type === "refusal") };
}

/** A stream's tap that also rebuilds the complete answer from the client's events. */
export class CollectingTap implements StreamTap {
  readonly #inner: StreamTap;
  readonly #reader: ReplyReader;
  readonly #writer: ReplyWriter;
  #stop: IrStop | undefined;
  #refused = false;
  #unreadable = false;

  constructor(inner: StreamTap, model: string, inputTokens: number, request: Obj) {
    this.#inner = inner;
    this.#reader = replyReader(inner.protocol);
    this.#writer = replyWriter(inner.protocol, model, inputTokens, request);
  }

  get protocol(): TextProtocol {
    return this.#inner.protocol;
  }
  get events(): number {
    return this.#inner.events;
  }
  get created(): Record<string, unknown> | undefined {
    return this.#inner.created;
  }
  get complete(): boolean {
    return this.#inner.complete;
  }

  onEvent(name: string | undefined, data: string): boolean {
    const usageChunk = this.#inner.onEvent(name, data);
    if (!this.#unreadable) {
      const read = this.#reader.read(name, data);
      if (read.ok) for (const event of read.value) this.#push(event);
      else this.#unreadable = true;
    }
    return usageChunk;
  }

  #push(event: IrEvent): void {
    if (event.type === "finish") this.#stop = event.stop;
    if (event.type === "part_start" && event.part.type === "refusal") this.#refused = true;
    this.#writer.push(event);
  }

  finishReasons(): string[] {
    return this.#inner.finishReasons();
  }

  usage(inputTokens: number, outputCap: number): TappedUsage {
    return this.#inner.usage(inputTokens, outputCap);
  }

  /** The complete answer and how it ended, when the stream was read whole to its finish. */
  answer(): { json: string; end: AnswerEnd } | undefined {
    if (this.#unreadable) return undefined;
    for (const event of this.#reader.end()) this.#push(event);
    if (this.#stop === undefined) return undefined;
    return { json: JSON.stringify(this.#writer.answer()), end: { stop: this.#stop, refused: this.#refused } };
  }
}

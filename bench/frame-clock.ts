// Times the frames of one SSE stream as its bytes arrive: every `data:` line is a frame (Chat's
// `data: [DONE]` is not), stamped with the arrival time of the bytes that held it; the stream is
// whole once the protocol's last event has been seen. Pure: the caller gives the text and the time,
// so a fetch body and a raw socket use the same clock.

const DATA = "data:";
const DONE = "data: [DONE]";

export class FrameClock {
  /** Arrival time of each frame, in the caller's clock (ms). */
  readonly stamps: number[] = [];
  /** The protocol's last event was seen. */
  ended = false;
  private carry = "";
  private endCarry = "";

  /** `end`: text only the stream's last event holds (Chat's `data: [DONE]`). */
  constructor(private readonly end = DONE) {}

  /** Takes the text that arrived at `now`. */
  feed(text: string, now: number): void {
    const joined = this.carry + text;
    let at = joined.indexOf(DATA);
    let kept = -1;
    while (at !== -1) {
      const rest = joined.length - at;
      // `data:` at the very end might yet turn out to be `data: [DONE]`: decide with the next bytes.
      if (rest < DONE.length && DONE.startsWith(joined.slice(at))) {
        kept = at;
        break;
      }
      if (!joined.startsWith(DONE, at)) this.stamps.push(now);
      at = joined.indexOf(DATA, at + DATA.length);
    }
    // A `data:` cut in two by the chunk boundary is found once the rest arrives.
    this.carry = kept >= 0 ? joined.slice(kept) : joined.slice(-(DATA.length - 1));
    const seen = this.endCarry + text;
    if (seen.includes(this.end)) this.ended = true;
    this.endCarry = seen.slice(-(this.end.length - 1));
  }

  get frames(): number {
    return this.stamps.length;
  }

  /** The gaps between consecutive frames, ms. */
  gaps(): number[] {
    return this.stamps.slice(1).map((t, i) => t - (this.stamps[i] ?? t));
  }

  /** The longest gap between consecutive frames (ms) and the stamp of the frame it follows. */
  longestGap(): { ms: number; after: number } {
    let longest = { ms: 0, after: this.stamps[0] ?? 0 };
    for (let i = 1; i < this.stamps.length; i++) {
      const ms = (this.stamps[i] ?? 0) - (this.stamps[i - 1] ?? 0);
      if (ms > longest.ms) longest = { ms, after: this.stamps[i - 1] ?? 0 };
    }
    return longest;
  }

  /** The longest gap between consecutive frames, ms (0 for fewer than two frames). */
  maxGap(): number {
    return this.longestGap().ms;
  }
}

// Fault injection for the simulator: a FaultInjector wraps every model call of one simulated
// upstream (`modelgate sim`, or one in-process `sim` channel) with its fault profile — latency and
// jitter, a hang, 429/500/503 answers (first N calls, or by rate, from a seeded PRNG so runs
// repeat), and a stream cut after N content events — and counts what it saw: calls, connections,
// calls in flight (and the most at once), completions, cancellations by the client, disconnects.
import * as v from "valibot";
import { type FaultProfile, FaultProfileSchema } from "../config/channels.ts";
import { Rng } from "./random.ts";
import { simError } from "./text/errors.ts";
import type { Timing } from "./text/pace.ts";

/** The profile with every field at its default: no faults. */
export const NO_FAULTS: FaultProfile = v.parse(FaultProfileSchema, {});

export interface SimStats {
  calls: number;
  /** Distinct client connections (address:port) that sent calls. */
  connections: number;
  in_flight: number;
  max_in_flight: number;
  /** Answers delivered to their end. */
  completed: number;
  /** Calls the client abandoned before the answer ended (the upstream request was cancelled). */
  cancelled: number;
  /** Error answers by status. */
  errors: Record<string, number>;
  hangs: number;
  /** Streams cut by `disconnect_after_events`. */
  disconnects: number;
}

/** What the answer of a call that passed the faults should look like. */
export interface AnswerShape {
  timing: Timing | undefined;
  dropAfter: number | undefined;
}

const MAX_TRACKED_CONNECTIONS = 100_000;

function emptyStats(): SimStats {
  return {
    calls: 0,
    connections: 0,
    in_flight: 0,
    max_in_flight: 0,
    completed: 0,
    cancelled: 0,
    errors: {},
    hangs: 0,
    disconnects: 0,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const stop = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

export class FaultInjector {
  #profile: FaultProfile;
  #stats = emptyStats();
  #callsThisProfile = 0;
  readonly #rng: Rng;
  readonly #peers = new Set<string>();

  constructor(profile: FaultProfile, seed: number) {
    this.#profile = profile;
    this.#rng = new Rng(seed ^ 0x5eed);
  }

  get profile(): FaultProfile {
    return this.#profile;
  }

  /** Replaces the profile; `fail_first` counts again from zero. */
  setProfile(profile: FaultProfile): void {
    this.#profile = profile;
    this.#callsThisProfile = 0;
  }

  stats(): SimStats {
    return { ...this.#stats, errors: { ...this.#stats.errors } };
  }

  reset(): void {
    this.#stats = emptyStats();
    this.#peers.clear();
  }

  /** Counts a connection by its peer address and port. */
  sawPeer(peer: string): void {
    if (this.#peers.has(peer) || this.#peers.size >= MAX_TRACKED_CONNECTIONS) return;
    this.#peers.add(peer);
    this.#stats.connections = this.#peers.size;
  }

  /**
   * Runs one call: applies the faults, then `answer` with the profile's timing, and watches the
   * answer's body to its end. `errorShape` renders an error status in the endpoint's protocol.
   */
  async call(
    request: Request,
    answer: (shape: AnswerShape) => Promise<Response>,
    errorShape: (status: number, message: string) => Response = (s, m) => simError("openai", s, m),
  ): Promise<Response> {
    const s = this.#stats;
    const p = this.#profile;
    s.calls++;
    const nth = ++this.#callsThisProfile;
    s.in_flight++;
    s.max_in_flight = Math.max(s.max_in_flight, s.in_flight);
    const end = this.#ender(request.signal);
    await sleep(p.latency_ms + (p.jitter_ms > 0 ? this.#rng.next() * p.jitter_ms : 0), request.signal);
    if (request.signal.aborted) return end("cancelled", new Response(null, { status: 499 }));
    if (p.hang_rate > 0 && this.#rng.next() < p.hang_rate) {
      s.hangs++;
      await new Promise<void>((resolve) =>
        request.signal.addEventListener("abort", () => resolve(), { once: true }),
      );
      return end("cancelled", new Response(null, { status: 499 }));
    }
    const status = nth <= p.fail_first ? p.fail_status : this.#randomStatus();
    if (status !== undefined) {
      s.errors[status] = (s.errors[status] ?? 0) + 1;
      const response = errorShape(status, `simulator: fault profile answered ${status}`);
      if (status === 429 || status === 503)
        response.headers.set("retry-after", String(p.retry_after_seconds));
      return end("completed", response);
    }
    const timing =
      p.ttft_ms === undefined && p.tokens_per_second === undefined
        ? undefined
        : { ttftMs: p.ttft_ms ?? 0, tokensPerSecond: p.tokens_per_second ?? 0 };
    const response = await answer({ timing, dropAfter: p.disconnect_after_events });
    return this.#watch(response, end);
  }

  #randomStatus(): number | undefined {
    const p = this.#profile;
    if (p.rate_429 + p.rate_500 + p.rate_503 === 0) return undefined;
    const r = this.#rng.next();
    if (r < p.rate_429) return 429;
    if (r < p.rate_429 + p.rate_500) return 500;
    if (r < p.rate_429 + p.rate_500 + p.rate_503) return 503;
    return undefined;
  }

  /** Ends a call exactly once with its outcome; a client abort before that counts as cancelled. */
  #ender(signal: AbortSignal) {
    let ended = false;
    const end = (outcome: "completed" | "cancelled" | "disconnected", response?: Response): Response => {
      if (!ended) {
        ended = true;
        this.#stats.in_flight--;
        if (outcome === "completed") this.#stats.completed++;
        else if (outcome === "cancelled") this.#stats.cancelled++;
        else this.#stats.disconnects++;
      }
      return response ?? new Response(null);
    };
    signal.addEventListener("abort", () => end("cancelled"), { once: true });
    return end;
  }

  #watch(
    response: Response,
    end: (outcome: "completed" | "cancelled" | "disconnected", response?: Response) => Response,
  ): Response {
    const body = response.body;
    if (body === null) return end("completed", response);
    const reader = body.getReader();
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            end("completed");
            controller.close();
          } else controller.enqueue(value);
        } catch (thrown) {
          end("disconnected");
          controller.error(thrown);
        }
      },
      async cancel(reason) {
        end("cancelled");
        await reader.cancel(reason).catch(() => undefined);
      },
    });
    return new Response(watched, { status: response.status, headers: response.headers });
  }
}

// Fixtures of one upstream attempt's guard (src/upstream/guard.ts) for the tests that drive it:
// timeouts long enough never to fire unless a test shortens one, and a lease that records how it
// was released.
import type { Channel, Lease } from "../../src/upstream/channels.ts";
import type { ResolvedTimeouts } from "../../src/upstream/guard.ts";

export const LONG_TIMEOUTS: ResolvedTimeouts = {
  connect_ms: 60_000,
  first_byte_ms: 60_000,
  idle_ms: 60_000,
  total_ms: 60_000,
};

/** A lease of no real channel that keeps each outcome it is released with, in order. */
export function recordingLease(): Lease & { outcomes: string[] } {
  const outcomes: string[] = [];
  return {
    channel: {} as Channel,
    credential: undefined,
    outcomes,
    release(outcome) {
      outcomes.push(outcome);
    },
  };
}

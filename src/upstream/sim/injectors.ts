// The fault injector of each in-process sim channel (its `profile`), one per channel name and
// shared by every endpoint it serves (text, embeddings), whose counters tests and operators read
// through simChannelStats().
// NO_FAULTS from faults.ts, not the simulator's HTTP server: importing that would evaluate every
// simulated endpoint (images, speech, transcriptions) at start-up.
import { FaultInjector, NO_FAULTS, type SimStats } from "../../sim/faults.ts";
import type { Channel } from "../channels.ts";

const injectors = new Map<string, FaultInjector>();

/** The channel's injector, made at its first call. */
export function injectorOf(channel: Channel, seed: number): FaultInjector {
  const found = injectors.get(channel.name);
  if (found) return found;
  const profile = channel.config.kind === "sim" ? (channel.config.profile ?? NO_FAULTS) : NO_FAULTS;
  const made = new FaultInjector(profile, seed);
  injectors.set(channel.name, made);
  return made;
}

/** The counters of an in-process sim channel (undefined before its first call). */
export function simChannelStats(name: string): SimStats | undefined {
  return injectors.get(name)?.stats();
}

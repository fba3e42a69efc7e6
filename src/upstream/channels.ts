// Channels: which configured upstreams serve a model and in which order to try them (highest
// priority first, weighted random order among equal priorities), each with its circuit breaker,
// its concurrency cap and its credentials used in turn. A call holds a Lease from acquire() until
// its answer is complete; the lease reports the outcome to the circuit exactly once.

import { type ModelId, Secret } from "../base/types.ts";
import { ModelAllowList } from "../catalog/groups.ts";
import { type Quirks, resolveQuirks } from "../config/presets.ts";
import type { ChannelConfig, Config } from "../config/schema.ts";
import { Circuit, type CircuitSnapshot } from "./circuit.ts";

/** Why a channel could not take a call right now. */
export type Unavailable = "circuit_open" | "at_capacity";

export interface Lease {
  readonly channel: Channel;
  /** The credential for this call (rotates across the channel's credentials); undefined when none. */
  readonly credential: Secret | undefined;
  /** Ends the call: `success`/`failure` tell the circuit, `neutral` tells it nothing. Idempotent. */
  release(outcome: "success" | "failure" | "neutral"): void;
}

export class Channel {
  readonly config: ChannelConfig;
  readonly circuit: Circuit;
  /** The Chat Completions dialect of the server behind it (preset, then the entry's own quirks). */
  readonly quirks: Quirks;
  #inFlight = 0;
  #turn = 0;
  readonly #credentialEnvs: readonly string[];

  constructor(config: ChannelConfig) {
    this.config = config;
    this.circuit = new Circuit(config.circuit);
    this.quirks =
      config.kind === "sim"
        ? resolveQuirks(undefined, undefined)
        : resolveQuirks(config.preset, config.quirks);
    this.#credentialEnvs =
      config.kind === "sim"
        ? []
        : [...(config.api_key_env === undefined ? [] : [config.api_key_env]), ...config.api_key_envs];
  }

  get name(): string {
    return this.config.name;
  }

  /** How many credentials the channel rotates through. */
  get credentials(): number {
    return this.#credentialEnvs.length;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The model id to send upstream for a public id (the channel's model_map, else the same id). */
  upstreamModel(publicId: string): string {
    return this.config.kind === "sim" ? publicId : (this.config.model_map[publicId] ?? publicId);
  }

  /** Why the channel would refuse a call now, or undefined when it would take one. */
  unavailable(): Unavailable | undefined {
    const cap = this.config.max_concurrency;
    if (cap > 0 && this.#inFlight >= cap) return "at_capacity";
    return this.circuit.available() ? undefined : "circuit_open";
  }

  /** A lease for one call, or why there is none. */
  acquire(): Lease | Unavailable {
    const cap = this.config.max_concurrency;
    if (cap > 0 && this.#inFlight >= cap) return "at_capacity";
    if (!this.circuit.tryAcquire()) return "circuit_open";
    this.#inFlight++;
    let released = false;
    return {
      channel: this,
      credential: this.#nextCredential(),
      release: (outcome) => {
        if (released) return;
        released = true;
        this.#inFlight--;
        if (outcome === "success") this.circuit.success();
        else if (outcome === "failure") this.circuit.failure();
        else this.circuit.neutral();
      },
    };
  }

  /** State for /readyz. */
  status(): { name: string; kind: string; priority: number; in_flight: number; circuit: CircuitSnapshot } {
    return {
      name: this.name,
      kind: this.config.kind,
      priority: this.config.priority,
      in_flight: this.#inFlight,
      circuit: this.circuit.snapshot(),
    };
  }

  #nextCredential(): Secret | undefined {
    const count = this.#credentialEnvs.length;
    for (let i = 0; i < count; i++) {
      const env = this.#credentialEnvs[this.#turn++ % count];
      const value = env === undefined ? undefined : process.env[env];
      if (value) return new Secret(value);
    }
    return undefined;
  }
}

/** Orders channels: priority descending, then a weighted random order (Efraimidis–Spirakis keys). */
export function orderChannels(channels: readonly Channel[], random: () => number = Math.random): Channel[] {
  if (channels.length < 2) return [...channels];
  const keyed = channels.map((channel) => ({
    channel,
    key: random() ** (1 / channel.config.weight),
  }));
  keyed.sort((a, b) => b.channel.config.priority - a.channel.config.priority || b.key - a.key);
  return keyed.map((k) => k.channel);
}

/** An index from public model id to the channels serving it, built once from the configuration. */
export class ChannelTable {
  readonly #byModel = new Map<string, Channel[]>();
  readonly #all: Channel[] = [];

  constructor(config: Config) {
    for (const channelConfig of config.channels) {
      const channel = new Channel(channelConfig);
      this.#all.push(channel);
      for (const model of new ModelAllowList(channelConfig.models).models()) {
        const list = this.#byModel.get(model.id) ?? [];
        list.push(channel);
        this.#byModel.set(model.id, list);
      }
    }
  }

  /** The channels for a model, in the order to try them this time; empty when none serves it. */
  forModel(modelId: ModelId): readonly Channel[] {
    const list = this.#byModel.get(modelId);
    return list === undefined ? [] : orderChannels(list);
  }

  /** Every configured channel, in configuration order. */
  all(): readonly Channel[] {
    return this.#all;
  }
}

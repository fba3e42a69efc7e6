// Channel lookup: which configured upstream channels serve a model, in the order to try them.
// (The resilience issue adds priorities, weights, circuit state and concurrency caps here.)
import { ModelAllowList } from "../catalog/groups.ts";
import type { ChannelConfig, Config } from "../config/schema.ts";

export interface Channel {
  config: ChannelConfig;
  /** The model id to send upstream for a public id (the channel's model_map, else the same id). */
  upstreamModel(publicId: string): string;
}

/** An index from public model id to the channels serving it, built once from the configuration. */
export class ChannelTable {
  readonly #byModel = new Map<string, Channel[]>();

  constructor(config: Config) {
    for (const channelConfig of config.channels) {
      const map = channelConfig.kind === "sim" ? {} : channelConfig.model_map;
      const channel: Channel = { config: channelConfig, upstreamModel: (id) => map[id] ?? id };
      for (const model of new ModelAllowList(channelConfig.models).models()) {
        const list = this.#byModel.get(model.id) ?? [];
        list.push(channel);
        this.#byModel.set(model.id, list);
      }
    }
  }

  /** The channels for a model, in configuration order; empty when none serves it. */
  forModel(modelId: string): readonly Channel[] {
    return this.#byModel.get(modelId) ?? [];
  }
}

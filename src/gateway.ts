// The running gateway's shared state, built once at start and handed to every handler.

import pkg from "../package.json";
import { CidrList } from "./auth/ip.ts";
import { KeyCache } from "./auth/keys.ts";
import type { Config } from "./config/schema.ts";
import type { Store } from "./store/store.ts";

export const VERSION: string = pkg.version;

export interface Gateway {
  config: Config;
  store: Store;
  keys: KeyCache;
  /** Peers whose X-Forwarded-For is believed. */
  trustedProxies: CidrList;
}

export async function startGateway(config: Config, store: Store): Promise<Gateway> {
  const keys = new KeyCache(store);
  await keys.start();
  return { config, store, keys, trustedProxies: new CidrList(config.server.trusted_proxies) };
}

export async function stopGateway(gateway: Gateway): Promise<void> {
  await gateway.keys.stop();
  await gateway.store.close();
}

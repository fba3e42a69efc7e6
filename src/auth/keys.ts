// Authentication against an in-memory copy of the keys, looked up by SHA-256 of the secret.
// The copy is reloaded when the store's revision changes (polled, and on PostgreSQL also notified
// the moment a change commits on any node or in the CLI), so a revoked key is refused within one
// poll interval at worst without a database query per request.

import { CidrList, type parseAddress } from "../base/ip.ts";
import type { AccountId, KeyId, Nanos } from "../base/types.ts";
import { ModelAllowList } from "../catalog/groups.ts";
import type { Budgets } from "../store/sqlite/schema.ts";
import type { Store } from "../store/store.ts";
import { GatewayError } from "../wire/errors.ts";
import { ADMIN_TOKEN_PREFIX, hashSecret } from "./secret.ts";

type Address = NonNullable<ReturnType<typeof parseAddress>>;

/** Who is calling, as the rest of the request path needs it. */
export interface Principal {
  keyId: KeyId;
  keyName: string;
  accountId: AccountId;
  accountName: string;
  group: string;
  models: ModelAllowList;
  dailyCap: Nanos | null;
  rpm: number | null;
  concurrency: number | null;
  /** Tokens per minute of the key itself; null = the configured default (src/billing/ledger.ts). */
  tpm: number | null;
  /** The key's budgets other than daily (its daily one is dailyCap), and its account's: nano-USD by period. */
  budgets: Budgets | null;
  accountBudgets: Budgets | null;
}

interface CachedKey {
  principal: Principal;
  prefix: string;
  status: "enabled" | "revoked";
  expiresAt: number | null;
  allowIps: CidrList | null;
}

/** A request refused for a known key (for key security alerts); never carries the secret. */
export interface KeyRefusal {
  reason: "revoked_key" | "expired_key" | "ip_not_allowed";
  keyId: KeyId;
  keyName: string;
  keyPrefix: string;
  accountId: AccountId;
  accountName: string;
  client: string | null;
}

export interface KeyCacheOptions {
  /** How often the store's revision is polled, in ms. */
  refreshMs?: number;
  /** How often last-used times are written back, in ms. */
  touchMs?: number;
  /** Writes last-used times (default: the store's touchKeys, on this thread). */
  touch?: (lastUsed: ReadonlyMap<KeyId, number>) => Promise<void>;
  now?: () => number;
}

/** The gateway's in-memory key table. */
export class KeyCache {
  readonly #store: Store;
  readonly #refreshMs: number;
  readonly #touchMs: number;
  readonly #touch: (lastUsed: ReadonlyMap<KeyId, number>) => Promise<void>;
  readonly #now: () => number;
  #byHash = new Map<string, CachedKey>();
  #revision = -1;
  #lastUsed = new Map<KeyId, number>();
  #timers: ReturnType<typeof setInterval>[] = [];
  #refreshing = false;
  /** A refresh asked for while one was running: run once more after it. */
  #again = false;
  #unwatch: (() => Promise<void>) | undefined;
  /** Called (synchronously, must not block) when a known key is refused; set by the notifier. */
  onRefused: ((refusal: KeyRefusal) => void) | undefined;

  constructor(store: Store, options: KeyCacheOptions = {}) {
    this.#store = store;
    this.#refreshMs = options.refreshMs ?? 250;
    this.#touchMs = options.touchMs ?? 5000;
    this.#touch = options.touch ?? ((lastUsed) => store.touchKeys(lastUsed));
    this.#now = options.now ?? Date.now;
  }

  /**
   * Loads the keys and starts polling for changes; on a store that notifies (PostgreSQL), also
   * reloads as soon as a change is committed anywhere, the poll staying as the fallback.
   */
  async start(): Promise<void> {
    await this.refresh();
    if (this.#store.watch) {
      try {
        this.#unwatch = await this.#store.watch(() => void this.refresh().catch(logRefreshError));
      } catch (error) {
        logRefreshError(error);
      }
    }
    this.#timers.push(
      setInterval(() => void this.refresh().catch(logRefreshError), this.#refreshMs),
      setInterval(() => void this.flushLastUsed().catch(logRefreshError), this.#touchMs),
    );
    for (const timer of this.#timers) timer.unref();
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.#unwatch?.().catch(logRefreshError);
    this.#unwatch = undefined;
    await this.flushLastUsed();
  }

  /** Reloads the key table when the store's revision moved. */
  async refresh(): Promise<void> {
    if (this.#refreshing) {
      this.#again = true; // it may have read the revision before this change
      return;
    }
    this.#refreshing = true;
    try {
      const revision = await this.#store.revision();
      if (revision === this.#revision) return;
      const rows = await this.#store.loadAuthKeys();
      const allowLists = new Map<string, ModelAllowList>();
      const next = new Map<string, CachedKey>();
      for (const row of rows) {
        const patternsKey = row.groupModelPatterns.join("\n");
        let models = allowLists.get(patternsKey);
        if (!models) {
          models = new ModelAllowList(row.groupModelPatterns);
          allowLists.set(patternsKey, models);
        }
        next.set(row.secretHash, {
          principal: {
            keyId: row.id,
            keyName: row.name,
            accountId: row.accountId,
            accountName: row.account,
            group: row.group,
            models,
            dailyCap: row.dailyCap,
            rpm: row.rpm,
            tpm: row.tpm,
            budgets: row.budgets,
            accountBudgets: row.accountBudgets,
            concurrency: row.concurrency,
          },
          prefix: row.prefix,
          status: row.status,
          expiresAt: row.expiresAt,
          allowIps: row.allowIps && row.allowIps.length > 0 ? new CidrList(row.allowIps) : null,
        });
      }
      this.#byHash = next;
      this.#revision = revision;
    } finally {
      this.#refreshing = false;
      if (this.#again) {
        this.#again = false;
        void this.refresh().catch(logRefreshError);
      }
    }
  }

  /** Checks a presented secret and client address; returns the principal or throws 401/403. */
  authenticate(presented: Presented | string | undefined, client: Address | undefined): Principal {
    const secret: Presented | undefined =
      typeof presented === "string"
        ? presented
          ? { kind: "secret", value: presented }
          : undefined
        : presented;
    if (!secret) {
      throw new GatewayError(
        "invalid_api_key",
        "No API key provided. Send it as `Authorization: Bearer sk-...` or `x-api-key: sk-...`.",
        { code: "missing_api_key" },
      );
    }
    if (secret.kind === "malformed") throw malformedAuthorization(secret.scheme);
    const entry = this.#byHash.get(hashSecret(secret.value));
    if (!entry) {
      if (secret.value.startsWith(ADMIN_TOKEN_PREFIX)) {
        throw new GatewayError(
          "invalid_api_key",
          `This is an admin token (${redact(secret.value)}), not an API key: admin tokens open /admin/v1 and \`modelgate tui\`, not /v1. Send an API key (sk-...); \`modelgate keys create --account NAME\` makes one.`,
          { code: "admin_token_not_api_key" },
        );
      }
      throw new GatewayError(
        "invalid_api_key",
        `Incorrect API key provided: ${redact(secret.value)}. Check the key you sent.`,
      );
    }
    const lapsed = this.#lapsed(entry);
    if (lapsed) {
      this.#refused(entry, lapsed.reason, client);
      throw lapsed.error;
    }
    if (entry.allowIps && !entry.allowIps.contains(client)) {
      this.#refused(entry, "ip_not_allowed", client);
      throw new GatewayError(
        "ip_not_allowed",
        `Requests from ${client?.toString() ?? "an unknown address"} are not allowed for this API key: the address is outside its IP allowlist.`,
      );
    }
    this.#lastUsed.set(entry.principal.keyId, this.#now());
    return entry.principal;
  }

  /**
   * Whether a key that was accepted still stands, for a connection that outlives one request (the
   * Responses WebSocket): the refusal its next request would get when it was revoked, expired or
   * removed since; undefined while it stands. No alert, no last-used time: nothing was asked.
   */
  standing(presented: Presented | undefined): GatewayError | undefined {
    if (presented?.kind !== "secret") return undefined;
    const entry = this.#byHash.get(hashSecret(presented.value));
    if (entry === undefined)
      return new GatewayError("invalid_api_key", "The API key is no longer known to the gateway.", {
        code: "revoked_api_key",
      });
    return this.#lapsed(entry)?.error;
  }

  /** A revoked or expired key's refusal. */
  #lapsed(entry: CachedKey): { reason: KeyRefusal["reason"]; error: GatewayError } | undefined {
    if (entry.status === "revoked") {
      const error = new GatewayError(
        "invalid_api_key",
        `The API key ${entry.prefix}… has been revoked. Ask the operator for a new key.`,
        { code: "revoked_api_key" },
      );
      return { reason: "revoked_key", error };
    }
    if (entry.expiresAt !== null && entry.expiresAt <= this.#now()) {
      const error = new GatewayError(
        "invalid_api_key",
        `The API key ${entry.prefix}… expired at ${new Date(entry.expiresAt).toISOString()}. Ask the operator for a new key.`,
        { code: "expired_api_key" },
      );
      return { reason: "expired_key", error };
    }
    return undefined;
  }

  #refused(entry: CachedKey, reason: KeyRefusal["reason"], client: Address | undefined): void {
    if (!this.onRefused) return;
    try {
      this.onRefused({
        reason,
        keyId: entry.principal.keyId,
        keyName: entry.principal.keyName,
        keyPrefix: entry.prefix,
        accountId: entry.principal.accountId,
        accountName: entry.principal.accountName,
        client: client?.toString() ?? null,
      });
    } catch (error) {
      // An alerting failure must never change the answer the client gets.
      console.error("modelgate: key refusal hook failed:", error);
    }
  }

  async flushLastUsed(): Promise<void> {
    if (this.#lastUsed.size === 0) return;
    const batch = this.#lastUsed;
    this.#lastUsed = new Map();
    await this.#touch(batch);
  }
}

/** Shows enough of a wrong key for the caller to recognise it, never the whole secret. */
function redact(secret: string): string {
  if (secret.length <= 12) return "****";
  return `${secret.slice(0, 6)}****${secret.slice(-4)}`;
}

function logRefreshError(error: unknown): void {
  console.error(
    `modelgate: key cache refresh failed: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/**
 * What a request presents: `Authorization: Bearer …` first, then `x-api-key`. An Authorization
 * header that is not `Bearer TOKEN` (a bare `sk-…`, `Basic …`) is `malformed` unless x-api-key
 * carries a key, so the answer can say what was wrong instead of "no key".
 */
export type Presented = { kind: "secret"; value: string } | { kind: "malformed"; scheme: string };

export function presentedSecret(headers: Headers): Presented | undefined {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return { kind: "secret", value: match[1] };
  }
  const apiKey = headers.get("x-api-key")?.trim();
  if (apiKey) return { kind: "secret", value: apiKey };
  if (!authorization?.trim()) return undefined;
  return { kind: "malformed", scheme: authorization.trim().split(/\s+/)[0] ?? "" };
}

function malformedAuthorization(scheme: string): GatewayError {
  const bare = /^(sk-|mga-)/.test(scheme);
  const what = bare
    ? "The Authorization header carries the key without the `Bearer ` prefix."
    : /^bearer$/i.test(scheme)
      ? "The Authorization header says `Bearer` but no key follows it."
      : `The Authorization header uses the scheme \`${scheme.slice(0, 20)}\`, which this gateway does not accept.`;
  return new GatewayError(
    "invalid_api_key",
    `${what} Send \`Authorization: Bearer sk-...\` (or \`x-api-key: sk-...\`).`,
    { code: "malformed_authorization" },
  );
}

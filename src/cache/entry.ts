// What the response cache keeps for one request and where it keeps it: the seam both backends
// (SQLite on one node, sqlite.ts; Redis in a cluster, redis.ts) implement, and the canonical
// request key they are found by.

import * as v from "valibot";
import { nanos } from "../base/money.ts";
import type { ModelId, Nanos } from "../base/types.ts";
import { describeIssues } from "../base/validation.ts";
import { PROTOCOLS } from "../protocols/index.ts";
import type { TextProtocol } from "../wire/text-form.ts";
import { USAGE_COUNTS_FIELDS, type UsageCounts } from "../wire/usage-counts.ts";

/** A stored answer: complete, in the protocol it was asked in, with what it used and cost. */
export interface CachedAnswer {
  protocol: TextProtocol;
  /** The complete answer as the non-stream JSON body (a stream hit is replayed from it). */
  answer: string;
  usage: UsageCounts;
  /** The original answer's settled cost; a hit bills `[cache] hit_cost_fraction` of it. */
  costNanos: Nanos;
  createdAt: number;
  expiresAt: number;
}

const figure = v.pipe(v.number(), v.finite());

/**
 * A stored answer as read back from a store shared by nodes (Redis): what another version of the
 * gateway wrote, or a damaged value, must be a miss and never a hit billed from missing numbers.
 */
const StoredAnswer = v.object({
  protocol: v.picklist(Object.keys(PROTOCOLS) as TextProtocol[]),
  answer: v.string(),
  usage: v.object(USAGE_COUNTS_FIELDS),
  costNanos: figure,
  createdAt: figure,
  expiresAt: figure,
});

/** A stored answer read from its JSON text, or why the text is not one. */
export function readStoredAnswer(text: string): { answer: CachedAnswer } | { problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
  const parsed = v.safeParse(StoredAnswer, json);
  if (!parsed.success) return { problem: describeIssues(parsed.issues) };
  return { answer: { ...parsed.output, costNanos: nanos(parsed.output.costNanos) } };
}

export interface CacheBackend {
  /** The answer stored under `key`, unless it expired by `now`. */
  get(key: string, now: number): Promise<CachedAnswer | undefined>;
  /** Stores (or replaces) the answer; evicts the oldest while the total is over the bound. */
  put(key: string, scope: string, entry: CachedAnswer): Promise<void>;
  /** Deletes every answer of `scope` (every answer without one); resolves to how many. */
  purge(scope?: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Request fields that never change the answer: the mode (a stream is replayed from the stored
 * answer), the end-user id, and routing or retention hints.
 */
const NOT_IN_KEY = new Set([
  "stream",
  "stream_options",
  "user",
  "safety_identifier",
  "prompt_cache_key",
  "store",
]);

/** JSON text with every object's keys sorted, so the same request always reads the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The key of a request in `scope`: the endpoint, the catalog model it is served by (an alias and
 * its target share answers) and every other field of the body but those in NOT_IN_KEY, hashed.
 */
export function requestKey(
  scope: string,
  endpoint: string,
  model: ModelId,
  body: Record<string, unknown>,
): string {
  const fields: Record<string, unknown> = {};
  for (const name in body) if (!NOT_IN_KEY.has(name)) fields[name] = body[name];
  fields.model = model;
  const hash = new Bun.CryptoHasher("sha256").update(`${endpoint}\n${canonical(fields)}`).digest("hex");
  return `${scope}:${hash}`;
}

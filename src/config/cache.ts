// The `[cache]` configuration section: the exact response cache, off unless a group or a key turns
// it on with a TTL. A key's own entry wins over its group's. The entry's scope says who shares
// answers: the calling account (default), every account of the key's group, or every caller.
//
//   [cache]
//   max_bytes = 268435456                # all stored answers together; the oldest go first
//   max_entry_bytes = 4194304            # a larger answer is not stored
//
//   [cache.groups.default]
//   ttl_seconds = 600                    # how long an answer is served again
//   hit_cost_fraction = "0.1"            # a hit bills this fraction of the original cost (default 0)
//   scope = "account"                    # account | group | global
//
//   [cache.keys."key_0123abcd"]          # a key id (modelgate keys list)
//   ttl_seconds = 60
import * as v from "valibot";
import { wholeNumber } from "./blocks.ts";

/** A fraction from 0 to 1 with at most 3 decimals, kept as text so it converts exactly. */
const Fraction = v.pipe(
  v.union([v.string(), v.number()], 'expected a fraction from 0 to 1 such as "0.1"'),
  v.transform(String),
  v.regex(
    /^(0(\.\d{1,3})?|1(\.0{1,3})?)$/,
    'expected a fraction from 0 to 1 with at most 3 decimals, such as "0.1"',
  ),
);

const PolicySchema = v.strictObject({
  /** Seconds an answer is served again; at least 1 (leave the entry out to keep the cache off). */
  ttl_seconds: v.pipe(
    v.number("expected a number of seconds"),
    v.integer("expected a whole number of seconds"),
    v.minValue(1, "must be at least 1 second; leave the entry out to keep the cache off"),
    v.maxValue(30 * 86_400, "must be at most 30 days (2592000 seconds)"),
  ),
  /** Who shares stored answers: the calling account, the key's group, or every caller. */
  scope: v.optional(
    v.picklist(["account", "group", "global"], "expected account, group or global"),
    "account",
  ),
  /** The fraction of the original cost a hit is billed (0: hits are free). */
  hit_cost_fraction: v.optional(Fraction, "0"),
});

export type CachePolicyConfig = v.InferOutput<typeof PolicySchema>;

export const CacheConfigSchema = v.strictObject({
  /** Per group name: the cache for its keys. */
  groups: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), PolicySchema), {}),
  /** Per key id: the cache for that key (wins over its group's). */
  keys: v.optional(v.record(v.pipe(v.string(), v.minLength(1)), PolicySchema), {}),
  /** The most bytes all stored answers take together; the oldest are evicted first. */
  max_bytes: v.optional(wholeNumber(1024, 64 * 1024 ** 3), 256 * 1024 ** 2),
  /** The largest answer stored, in bytes. */
  max_entry_bytes: v.optional(wholeNumber(256, 256 * 1024 ** 2), 4 * 1024 ** 2),
});

export type CacheConfig = v.InferOutput<typeof CacheConfigSchema>;

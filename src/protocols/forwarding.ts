// The `service_tier` rule every protocol's forwarding rules hold, with its own tiers (the rules
// are applied by pipeline/forwarding.ts).
import type { FieldRule } from "./adapter.ts";

/** Refuses a `service_tier` the upstream bills at rates the gateway does not price. */
export function serviceTier(tiers: readonly string[]): FieldRule {
  return {
    field: "service_tier",
    refuse: (value) =>
      value === null || tiers.includes(String(value))
        ? undefined
        : `service_tier ${JSON.stringify(value)} is billed by the upstream at rates this gateway does not price; send ${tiers.map((t) => `"${t}"`).join(" or ")}, or leave it out`,
  };
}

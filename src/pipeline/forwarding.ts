// What a same-protocol upstream receives of the client's body. The rule: every field the client
// sent is forwarded as sent (unknown fields included, so new upstream features keep working), with
// the model id mapped and the gateway's own overrides; the gateway validates the fields it meters
// (model, output limits, sampling ranges, Chat `n`) before that. The exceptions are the fields
// below, which would make the upstream bill at rates the gateway's price table does not have, or
// do work the gateway cannot relay or bill: those are refused with 400 naming the field, never
// silently dropped. A channel speaking another protocol receives only what the translation carries.
import { GatewayError } from "../wire/errors.ts";
import type { TextProtocol } from "../wire/text-form.ts";

interface FieldRule {
  field: string;
  /** Why a value is refused, or undefined when it may be forwarded. */
  refuse(value: unknown): string | undefined;
}

const TIERS: Record<TextProtocol, readonly string[]> = {
  chat: ["auto", "default"],
  responses: ["auto", "default"],
  messages: ["auto", "standard_only"],
};

const serviceTier = (protocol: TextProtocol): FieldRule => ({
  field: "service_tier",
  refuse: (value) =>
    value === null || TIERS[protocol].includes(String(value))
      ? undefined
      : `service_tier ${JSON.stringify(value)} is billed by the upstream at rates this gateway does not price; send ${TIERS[protocol].map((t) => `"${t}"`).join(" or ")}, or leave it out`,
});

const RULES: Record<TextProtocol, readonly FieldRule[]> = {
  chat: [
    serviceTier("chat"),
    {
      field: "modalities",
      refuse: (value) =>
        Array.isArray(value) && value.includes("audio")
          ? 'modalities "audio" produces audio tokens, which this gateway does not price; ask for ["text"]'
          : undefined,
    },
    {
      field: "audio",
      refuse: (value) =>
        value === null ? undefined : "audio output is not priced by this gateway; leave out the audio field",
    },
  ],
  responses: [
    serviceTier("responses"),
    {
      field: "background",
      refuse: (value) =>
        value === true
          ? "background responses run after this request ends, so the gateway cannot relay or bill them; send background: false"
          : undefined,
    },
  ],
  messages: [serviceTier("messages")],
};

/** Refuses (400 naming the field) a body field the gateway does not forward; see the rule above. */
export function checkForwardable(protocol: TextProtocol, body: Record<string, unknown>): void {
  for (const rule of RULES[protocol]) {
    const value = body[rule.field];
    if (value === undefined) continue;
    const reason = rule.refuse(value);
    if (reason) throw new GatewayError("invalid_request", reason, { param: rule.field });
  }
}

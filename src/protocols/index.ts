// The text protocols, one record each (the record's shape: adapter.ts). A new protocol is its
// folder here and one line below; tsc then lists what its record lacks. Everything that differs
// by protocol is looked up here by name, never switched on elsewhere (the architecture test).
import type { TextAdapter } from "./adapter.ts";
import { chat } from "./chat/index.ts";
import { messages } from "./messages/index.ts";
import { responses } from "./responses/index.ts";

/** Checks that each record is filed under its own name. */
function registry<T extends { [P in keyof T]: TextAdapter<P & string> }>(records: T): Readonly<T> {
  return records;
}

export const PROTOCOLS = registry({
  responses,
  chat,
  messages,
});

/** The client protocols of the text endpoints. */
export type TextProtocol = keyof typeof PROTOCOLS;

/** The record of `name`. */
export function protocolOf(name: TextProtocol): TextAdapter<TextProtocol> {
  return PROTOCOLS[name];
}

/** Every record, in the registry's order. */
export const ALL_PROTOCOLS: readonly TextAdapter<TextProtocol>[] = Object.values(PROTOCOLS);

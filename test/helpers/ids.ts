// Typed ids from literals, for fixtures that name accounts and keys by hand.
import {
  type AccountId,
  type KeyId,
  type ModelId,
  toAccountId,
  toKeyId,
  toModelId,
} from "../../src/base/types.ts";

/** An account id from a literal: `acct(1)`. */
export function acct(id: number): AccountId {
  return toAccountId(id);
}

/** A key id from a literal: `kid("k1")`. */
export function kid(id: string): KeyId {
  return toKeyId(id);
}

/** A model id from a literal: `mid("modelx-5.5")`. */
export function mid(id: string): ModelId {
  return toModelId(id);
}

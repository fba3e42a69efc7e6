// Branded types shared across modules: they give meaning to plain strings and numbers.

declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A public model id exactly as in the catalog, e.g. `modelx-5.5`. */
export type ModelId = Brand<string, "ModelId">;
/** A key's public id, e.g. `key_3f9a…`; never the secret. */
export type KeyId = Brand<string, "KeyId">;
/** An account's id: the integer key of its row in the store. */
export type AccountId = Brand<number, "AccountId">;
/** Money as an integer number of nano-USD (1 USD = 1e9). */
export type Nanos = Brand<number, "Nanos">;

/** Brands a model id where one enters the code: a store row, a parsed request or flag. */
export function toModelId(id: string): ModelId {
  return id as ModelId;
}

/** Brands a key id where one enters the code: a store row, a parsed request or flag. */
export function toKeyId(id: string): KeyId {
  return id as KeyId;
}

/** Brands an account id where one enters the code: a store row, a parsed request or flag. */
export function toAccountId(id: number): AccountId {
  return id as AccountId;
}

/** A value that must never reach a log: printing it shows `*****`. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  expose(): string {
    return this.#value;
  }
  toString(): string {
    return "*****";
  }
  toJSON(): string {
    return "*****";
  }
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return "Secret(*****)";
  }
}

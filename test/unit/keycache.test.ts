import { beforeEach, describe, expect, test } from "bun:test";
import { createKey } from "../../src/admin/keys.ts";
import { KeyCache, presentedSecret } from "../../src/auth/keys.ts";
import { parseAddress } from "../../src/base/ip.ts";
import { nanos } from "../../src/base/money.ts";
import { AliasTable } from "../../src/catalog/aliases.ts";
import { requireModel } from "../../src/pipeline/model.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/store.ts";
import { GatewayError } from "../../src/wire/errors.ts";

let store: Store;
let now = 1_800_000_000_000;
const local = parseAddress("127.0.0.1");
const NO_ALIASES = new AliasTable({ models: {}, groups: {} });

async function key(overrides: Partial<Parameters<typeof createKey>[1]> = {}) {
  return createKey(store, {
    account: "acme",
    group: "text",
    name: "k",
    expiresAt: null,
    allowIps: [],
    dailyCap: null,
    rpm: null,
    concurrency: null,
    tpm: null,
    ...overrides,
  });
}

function failure(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("expected a GatewayError");
}

beforeEach(async () => {
  store = await openStore("sqlite://:memory:");
  await store.createAccount("acme", nanos(0));
  await store.setGroup("text", ["modelx-5*"]);
});

describe("KeyCache", () => {
  test("authenticates by secret and reports why a key is refused", async () => {
    const good = await key();
    const revoked = await key();
    await store.setKeyStatus(revoked.key.id, "revoked");
    const expiring = await key({ expiresAt: now + 1000 });
    const cache = new KeyCache(store, { now: () => now });
    await cache.refresh();

    expect(cache.authenticate(good.secret, local).keyId).toBe(good.key.id);
    expect(failure(() => cache.authenticate(undefined, local)).code).toBe("missing_api_key");
    expect(failure(() => cache.authenticate("sk-wrong-wrong-wrong-wrong", local)).code).toBe(
      "invalid_api_key",
    );
    const revokedError = failure(() => cache.authenticate(revoked.secret, local));
    expect([revokedError.status, revokedError.code]).toEqual([401, "revoked_api_key"]);
    expect(cache.authenticate(expiring.secret, local).keyId).toBe(expiring.key.id);
    now += 1000;
    const expiredError = failure(() => cache.authenticate(expiring.secret, local));
    expect([expiredError.status, expiredError.code]).toEqual([401, "expired_api_key"]);
  });

  test("the wrong key's message never contains the whole secret", async () => {
    const cache = new KeyCache(store);
    await cache.refresh();
    const secret = "sk-abcdefghijklmnopqrstuvwxyz0123456789";
    expect(failure(() => cache.authenticate(secret, local)).message).not.toContain(secret);
  });

  test("IP allowlists refuse other addresses with 403", async () => {
    const limited = await key({ allowIps: ["10.0.0.0/8", "2001:db8::/32"] });
    const cache = new KeyCache(store);
    await cache.refresh();
    expect(cache.authenticate(limited.secret, parseAddress("10.3.4.5")).keyId).toBe(limited.key.id);
    expect(cache.authenticate(limited.secret, parseAddress("2001:db8::9")).keyId).toBe(limited.key.id);
    const refused = failure(() => cache.authenticate(limited.secret, local));
    expect([refused.status, refused.code]).toEqual([403, "ip_not_allowed"]);
  });

  test("reloads only when the store's revision moves", async () => {
    const cache = new KeyCache(store);
    await cache.refresh();
    const later = await key();
    expect(failure(() => cache.authenticate(later.secret, local)).status).toBe(401);
    await cache.refresh();
    expect(cache.authenticate(later.secret, local).keyId).toBe(later.key.id);
    await store.setKeyStatus(later.key.id, "revoked");
    await cache.refresh();
    expect(failure(() => cache.authenticate(later.secret, local)).code).toBe("revoked_api_key");
  });

  test("the group decides the models: unknown ids are 400 not found, others 403", async () => {
    const k = await key();
    const cache = new KeyCache(store);
    await cache.refresh();
    const principal = cache.authenticate(k.secret, local);
    expect(requireModel(principal, "modelx-5.5", NO_ALIASES).id as string).toBe("modelx-5.5");
    const outside = failure(() => requireModel(principal, "modelz-opus-4-7", NO_ALIASES));
    expect([outside.status, outside.kind]).toEqual([403, "model_not_allowed"]);
    for (const id of ["modelz-haiku-4-5", "modelz.opus.4.7", "modelx-4o-mini", "gpt-4"]) {
      const unknown = failure(() => requireModel(principal, id, NO_ALIASES));
      expect([unknown.status, unknown.code]).toEqual([400, "model_not_found"]);
      expect(unknown.message).toContain("not found");
    }
    expect(failure(() => requireModel(principal, "modelz-haiku-4-5", NO_ALIASES)).message).toContain(
      "modelz-haiku-4-5-20251001",
    );
  });

  test("last-used times are written back in a batch", async () => {
    const k = await key();
    const cache = new KeyCache(store, { now: () => now });
    await cache.refresh();
    cache.authenticate(k.secret, local);
    await cache.flushLastUsed();
    expect((await store.listKeys())[0]?.lastUsedAt).toBe(now);
  });
});

describe("presented secret", () => {
  const secret = (value: string) => ({ kind: "secret" as const, value });
  test("Bearer first, then x-api-key", () => {
    expect(presentedSecret(new Headers({ authorization: "Bearer sk-a", "x-api-key": "sk-b" }))).toEqual(
      secret("sk-a"),
    );
    expect(presentedSecret(new Headers({ "x-api-key": "sk-b" }))).toEqual(secret("sk-b"));
    expect(presentedSecret(new Headers({ authorization: "Basic abc", "x-api-key": "sk-b" }))).toEqual(
      secret("sk-b"),
    );
    expect(presentedSecret(new Headers({}))).toBeUndefined();
  });

  test("an Authorization header that is not `Bearer TOKEN` is reported as such, with the fix", async () => {
    const cache = new KeyCache(store, { now: () => now });
    await cache.refresh();
    const refusal = (authorization: string) =>
      failure(() => cache.authenticate(presentedSecret(new Headers({ authorization })), local));
    const bare = refusal("sk-abcdefghijklmnopqrstuvwxyz");
    expect([bare.status, bare.code]).toEqual([401, "malformed_authorization"]);
    expect(bare.message).toContain("without the `Bearer ` prefix");
    expect(bare.message).toContain("Authorization: Bearer sk-...");
    expect(bare.message).not.toContain("abcdefghijklmnopqrstuvwxyz");
    expect(refusal("Basic dXNlcjpwYXNz").message).toContain("the scheme `Basic`");
    expect(refusal("Bearer").message).toContain("no key follows it");
  });

  test("an admin token sent to /v1 is named as an admin token", async () => {
    const cache = new KeyCache(store, { now: () => now });
    await cache.refresh();
    const token = "mga-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG";
    const error = failure(() => cache.authenticate(token, local));
    expect([error.status, error.code]).toEqual([401, "admin_token_not_api_key"]);
    expect(error.message).toContain("This is an admin token");
    expect(error.message).toContain("modelgate keys create");
    expect(error.message).not.toContain(token);
  });
});

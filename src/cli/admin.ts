// `modelgate admin token create|list|revoke`: mint an admin token for an existing install (the
// first one is made at bootstrap), list them (never their secrets), or revoke one (audited).
import { createAdminToken, revokeAdminToken } from "../admin/tokens.ts";
import { printableName } from "./flag-values.ts";
import { parse } from "./flags.ts";
import { STORE_FLAGS, storeFrom } from "./open-store.ts";
import { table } from "./table.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage:
  modelgate admin token create [--name NAME]   prints a new admin token (shown only once)
  modelgate admin token list [--json]
  modelgate admin token revoke ID              refuses the token from its next request on
common: --db URL (sqlite://PATH or postgres://USER@HOST:PORT/DB) | --journal PATH | --config FILE`;

const FLAGS = { ...STORE_FLAGS, name: { type: "string" } } as const;

export async function adminCommand(args: string[]): Promise<void> {
  const [resource, sub, ...rest] = args;
  if (resource !== "token") throw new UsageError(USAGE);
  const { values, positionals } = parse(rest, FLAGS, `admin token ${sub ?? ""}`.trim());
  if (positionals.length > (sub === "revoke" ? 1 : 0)) throw new UsageError(USAGE);
  switch (sub) {
    case "create": {
      const store = await storeFrom(values);
      const name = printableName(values.name ?? "cli", "--name");
      const { token, record } = await createAdminToken(store, name);
      await store.admin.audit(`cli:${process.env.USER ?? "unknown"}`, "admin_token.create", record.id, {
        name,
      });
      // The token alone on stdout, so `TOKEN=$(modelgate admin token create)` works.
      console.log(token);
      console.error(
        `created admin token ${record.id} (${record.prefix}…) named ${name}. It is shown only once.`,
      );
      await store.close();
      return;
    }
    case "list": {
      const store = await storeFrom(values);
      const rows = (await store.admin.listAdminTokens()).map((t) => ({
        id: t.id,
        name: t.name,
        prefix: t.prefix,
        revoked: t.revoked,
        created_at: new Date(t.createdAt).toISOString(),
      }));
      console.log(
        values.json ? JSON.stringify(rows) : table(rows, ["id", "name", "prefix", "revoked", "created_at"]),
      );
      await store.close();
      return;
    }
    case "revoke": {
      const [id] = positionals;
      if (!id) throw new UsageError(`admin token revoke needs the token's id (adm_...)\n${USAGE}`);
      const store = await storeFrom(values);
      try {
        const record = await revokeAdminToken(store, id, `cli:${process.env.USER ?? "unknown"}`);
        console.error(`revoked admin token ${record.id} (${record.prefix}…) named ${record.name}`);
      } finally {
        await store.close();
      }
      return;
    }
    default:
      throw new UsageError(USAGE);
  }
}

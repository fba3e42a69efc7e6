// Revoking admin tokens (issue 17, defect 2) against the compiled binary: by the CLI and by the
// admin API, refused within a second, and audited with who revoked them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminTokenIn, type RunningGateway, startGateway } from "../helpers/gateway.ts";
import { waitFor } from "../helpers/wait.ts";

let gw: RunningGateway;
let bootstrap: string;

interface AuditBody {
  data: { actor: string; action: string; target: string }[];
}

const admin = (path: string, token: string, method = "GET") =>
  fetch(`${gw.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${token}` } });

/** A new admin token minted by the CLI: its secret and id. */
async function mint(name: string): Promise<{ token: string; id: string }> {
  const created = await gw.cli(["admin", "token", "create", "--name", name]);
  expect(created.code).toBe(0);
  const id = /adm_[0-9a-f]+/.exec(created.stderr)?.[0] ?? "";
  return { token: created.stdout.trim(), id };
}

/** Waits until the admin API refuses `token` (the gateway's token cache has reloaded). */
function refused(token: string): Promise<true> {
  return waitFor("the admin API to refuse the revoked token", async () => {
    const r = await admin("/keys", token);
    if (r.status !== 401) expect(r.status).toBe(200);
    return r.status === 401 || undefined;
  });
}

beforeAll(async () => {
  gw = await startGateway();
  bootstrap = adminTokenIn(gw.logs()) ?? "";
}, 60_000);
afterAll(async () => {
  await gw.dispose();
}, 60_000);

describe("admin token revoke", () => {
  test("the CLI revokes a token: refused on its next request, audited as the CLI user", async () => {
    const { token, id } = await mint("ci");
    expect((await admin("/keys", token)).status).toBe(200);
    const revoked = await gw.cli(["admin", "token", "revoke", id]);
    expect(revoked.code).toBe(0);
    const r = await admin("/keys", token);
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_admin_token");
    const listed = await gw.cli(["admin", "token", "list", "--json"]);
    const rows = JSON.parse(listed.stdout) as { id: string; revoked: boolean }[];
    expect(rows.find((row) => row.id === id)?.revoked).toBe(true);
    const audit = (await (await admin("/audit", bootstrap)).json()) as AuditBody;
    const entry = audit.data.find((a) => a.target === id && a.action === "admin_token.revoke");
    expect(entry?.actor).toMatch(/^cli:/);
  }, 30_000);

  test("the admin API revokes a token: refused once the key cache reloads, audited with the revoking token", async () => {
    const { token, id } = await mint("dashboard");
    const answer = await admin(`/tokens/${id}/revoke`, bootstrap, "POST");
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { revoked: boolean }).revoked).toBe(true);
    await refused(token);
    const audit = (await (await admin("/audit", bootstrap)).json()) as AuditBody;
    const entry = audit.data.find((a) => a.target === id && a.action === "admin_token.revoke");
    expect(entry?.actor).toMatch(/^admin:adm_[0-9a-f]{16}:bootstrap$/);
    const list = (await (await admin("/tokens", bootstrap)).json()) as {
      data: { id: string; revoked: boolean }[];
    };
    expect(list.data.find((t) => t.id === id)?.revoked).toBe(true);
  }, 30_000);

  test("an unknown id is 404 on the API and an error naming the list command on the CLI", async () => {
    expect((await admin("/tokens/adm_0000/revoke", bootstrap, "POST")).status).toBe(404);
    const cli = await gw.cli(["admin", "token", "revoke", "adm_0000"]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("admin token list");
  }, 30_000);
});

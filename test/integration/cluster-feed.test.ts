// Cluster acceptance, the admin event feed: a reader of GET /admin/v1/events on one node of three
// (one PostgreSQL database, one Redis prefix) sees the requests every node served, each once.
import { afterAll, afterEach, expect, test } from "bun:test";
import { Cluster, chat, outcome } from "../helpers/cluster.ts";
import { dropPgDatabases } from "../unit/store-pg-fixture.ts";

afterAll(dropPgDatabases);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.dispose();
});

test("the admin event stream of one node shows the requests of all three, each once", async () => {
  const c = await Cluster.start();
  clusters.push(c);
  const admin = (await c.cli(["admin", "token", "create", "--name", "feed"])).stdout.trim();
  const { secret } = await c.createKey(["--account", "default", "--name", "feed"]);
  await c.waitForKey(secret);

  const events = await fetch(`${c.node(0).url}/admin/v1/events`, {
    headers: { authorization: `Bearer ${admin}` },
  });
  expect(events.status).toBe(200);
  const reader = (events.body as ReadableStream<Uint8Array>).getReader();
  await reader.read(); // ready
  await Bun.sleep(1_500); // the other nodes see the new subscriber at their next check (1 s)

  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await chat(c.node(i), secret);
    const id = response.headers.get("x-request-id");
    if (!id) throw new Error("no x-request-id");
    ids.push(id);
    expect((await outcome(response)).status).toBe(200);
  }
  let text = "";
  const decoder = new TextDecoder();
  const deadline = Date.now() + 5_000;
  while (!ids.every((id) => text.includes(id)) && Date.now() < deadline) {
    const next = await Promise.race([reader.read(), Bun.sleep(500).then(() => undefined)]);
    if (next?.done) break;
    if (next?.value) text += decoder.decode(next.value, { stream: true });
  }
  await Bun.sleep(300); // a duplicate would arrive by now
  const more = await Promise.race([reader.read(), Bun.sleep(200).then(() => undefined)]);
  if (more?.value) text += decoder.decode(more.value, { stream: true });
  await reader.cancel();
  const records = [...text.matchAll(/^data: (\{.*\})$/gm)].map(
    (m) => JSON.parse(m[1] ?? "{}") as { request_id: string; status: number; cost_nanos: number },
  );
  for (const id of ids) {
    const seen = records.filter((r) => r.request_id === id);
    expect(seen.length).toBe(1);
    expect(seen[0]?.status).toBe(200);
    expect(seen[0]?.cost_nanos).toBeGreaterThan(0);
  }
}, 30_000);

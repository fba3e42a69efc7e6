// Tokens per minute through the compiled binary: `keys create --tpm`, the `[billing.tpm]` group and
// account limits, the token rate-limit headers in both protocols' forms, the worst case held at
// admission and corrected at settlement, the 429 with Retry-After, and bad limits refused by the
// admin API and at config load with the field's path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import {
  bootstrapAdminToken,
  createKey,
  type RunningGateway,
  serveRefuses,
  startGateway,
} from "../helpers/gateway.ts";
import { keyAccepted } from "../helpers/wait.ts";

let sim: SimServer;
let gw: RunningGateway;
let token: string;

beforeAll(async () => {
  sim = startSimServer({ hostname: "127.0.0.1", port: 0, seed: 7 });
  gw = await startGateway({
    config: [
      `[bootstrap]\nbalance_usd = "100"`,
      `[billing.tpm.groups]\ninterns = 1`,
      `[[channels]]\nkind = "openai-chat"\nname = "sim-chat"\nbase_url = "${sim.url}/v1"\napi_key_env = "SIM_UPSTREAM_KEY"\nmodels = ["modelx-*"]`,
      `[[channels]]\nkind = "anthropic"\nname = "sim-messages"\nbase_url = "${sim.url}"\napi_key_env = "SIM_UPSTREAM_KEY"\nmodels = ["modelz-*"]`,
    ].join("\n"),
    env: { SIM_UPSTREAM_KEY: "sk-upstream" },
  });
  token = bootstrapAdminToken(gw);
}, 60_000);

afterAll(async () => {
  await gw.dispose();
  await sim.stop();
});

async function newKey(args: string[]): Promise<{ secret: string; id: string }> {
  const key = await createKey(gw, ["--account", "default", ...args]);
  await keyAccepted(gw.url, key.secret);
  return key;
}

function chat(secret: string, prompt: string, maxTokens = 40): Promise<Response> {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: "modelx-5.4-mini",
      max_tokens: maxTokens,
      messages: [{ role: "user", content: prompt }],
    }),
  });
}

const tokensHeader = (r: Response, name: string) => Number(r.headers.get(`x-ratelimit-${name}-tokens`));

/** The request's worst case in tokens, as a key with a large limit sees it held. */
async function worstCase(prompt: string): Promise<number> {
  const { secret } = await newKey(["--tpm", "1000000", "--name", "probe"]);
  const response = await chat(secret, prompt);
  expect(response.status).toBe(200);
  await response.text();
  return 1_000_000 - tokensHeader(response, "remaining");
}

describe("tokens per minute over HTTP", () => {
  test("the worst case is held at admission and corrected to the tokens used; over the limit → 429 with Retry-After", async () => {
    const prompt = "say hello";
    const worst = await worstCase(prompt);
    expect(worst).toBeGreaterThan(40);
    // Room for two worst cases and a bit: the first answer's correction decides the third.
    const { secret } = await newKey(["--tpm", String(2 * worst + 5), "--name", "tpm"]);
    const first = await chat(secret, prompt);
    expect(first.status).toBe(200);
    expect(tokensHeader(first, "limit")).toBe(2 * worst + 5);
    expect(tokensHeader(first, "remaining")).toBe(worst + 5);
    expect(first.headers.get("x-ratelimit-reset-tokens")).toMatch(/^[\d.]+m?s$|^\d+m[\d.]+s$/);
    const body = (await first.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    const used = body.usage.prompt_tokens + body.usage.completion_tokens;
    expect(used).toBeLessThan(worst);
    // The second is admitted against the first's actual tokens, not its worst case.
    const second = await chat(secret, prompt);
    expect(second.status).toBe(200);
    expect(tokensHeader(second, "remaining")).toBe(2 * worst + 5 - used - worst);
    await second.text();
    // A third worst case no longer fits until the first leaves the window.
    const third = await chat(secret, prompt);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(third.headers.get("x-ratelimit-limit-tokens")).toBe(String(2 * worst + 5));
    const error = ((await third.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.message).toContain("tokens per minute");
  });

  test("a group's default applies to keys without their own; Messages reports the anthropic form", async () => {
    const made = await gw.cli(["groups", "set", "interns", "--models", "*"]);
    if (made.code !== 0) throw new Error(made.stderr);
    const { secret } = await newKey(["--group", "interns", "--name", "intern"]);
    const refused = await chat(secret, "hi");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-limit-tokens")).toBe("1");
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      "more than the 1 tokens per minute",
    );
    const { secret: own } = await newKey(["--tpm", "100000", "--name", "messages"]);
    const messages = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": own, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({
        model: "modelz-sonnet-4-5-20250929",
        max_tokens: 30,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
    expect(messages.status).toBe(200);
    await messages.text();
    expect(messages.headers.get("anthropic-ratelimit-tokens-limit")).toBe("100000");
    expect(Number(messages.headers.get("anthropic-ratelimit-tokens-remaining"))).toBeLessThan(100_000);
    expect(messages.headers.get("anthropic-ratelimit-tokens-reset")).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  test("the admin API sets and clears a key's limit and refuses a bad one naming the field, changing nothing", async () => {
    const { id } = await newKey(["--name", "admin-tpm"]);
    const post = (json: unknown) =>
      fetch(`${gw.url}/admin/v1/keys/${id}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(json),
      });
    for (const bad of [-5, 1.5, "100"]) {
      const refused = await post({ tpm: bad });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain("tpm");
    }
    const set = await post({ tpm: 5000 });
    expect(set.status).toBe(200);
    expect(((await set.json()) as { tpm: number }).tpm).toBe(5000);
    expect(((await (await post({ tpm: null })).json()) as { tpm: number | null }).tpm).toBeNull();
    const listed = await gw.cli(["keys", "list", "--json"]);
    expect(
      (JSON.parse(listed.stdout) as { id: string; tpm: number | null }[]).find((k) => k.id === id),
    ).toMatchObject({
      tpm: null,
    });
    const cli = await gw.cli(["keys", "create", "--account", "default", "--tpm", "-3"]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("--tpm");
  });

  test("a bad [billing.tpm] setting stops the gateway at start, naming its path", async () => {
    for (const [toml, path] of [
      ["[billing.tpm.groups]\ndefault = -5", "billing.tpm.groups.default"],
      ["[billing.tpm.accounts]\nacme = 1.5", "billing.tpm.accounts.acme"],
      ["[billing.tpm]\ndefault = -1", "billing.tpm.default"],
    ] as const) {
      const result = await serveRefuses(toml);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain(path);
    }
  });
});

// Channel credentials travel as a Secret from the environment to the upstream call: the lease
// carries one, printing it in any way shows `*****`, and only the adapter's header sees the value.
import { expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { Channel } from "../../src/upstream/channels.ts";
import { bearer } from "../../src/upstream/post-text.ts";
import { tempDir } from "../helpers/gateway.ts";

test("a lease's credential prints as ***** and reaches the header whole", () => {
  process.env.MODELGATE_TEST_SECRET_KEY = "sk-test-value-123";
  const dir = tempDir("modelgate-secret-");
  try {
    const file = join(dir, "config.toml");
    writeFileSync(
      file,
      '[[channels]]\nname = "a"\nkind = "openai-chat"\nbase_url = "http://127.0.0.1:9"\napi_key_env = "MODELGATE_TEST_SECRET_KEY"\nmodels = ["*"]\n',
    );
    const config = loadConfig({ file, env: {}, flags: {} });
    const channelConfig = config.channels.find((c) => c.name === "a");
    if (channelConfig === undefined) throw new Error("channel a not loaded");
    const lease = new Channel(channelConfig).acquire();
    if (typeof lease === "string") throw new Error(`no lease: ${lease}`);
    const credential = lease.credential;
    expect(String(credential)).toBe("*****");
    expect(JSON.stringify({ credential })).toBe('{"credential":"*****"}');
    expect(Bun.inspect(credential)).not.toContain("sk-test-value-123");
    expect(bearer(credential)).toEqual({ authorization: "Bearer sk-test-value-123" });
    lease.release("success");
  } finally {
    rmSync(dir, { recursive: true, force: true });
    delete process.env.MODELGATE_TEST_SECRET_KEY;
  }
});

// The admin API's JSON for each kind of row, pinned to the key: names, key order, values and
// nulls. Clients (the terminal UI, scripts) read these answers; a change here is an API change.
import { describe, expect, test } from "bun:test";
import { accountView, groupView } from "../../src/admin/api-accounts.ts";
import { channelView, deliveryView } from "../../src/admin/api-notify.ts";
import { tokenView } from "../../src/admin/api-tokens.ts";
import { auditView, requestView, usageView } from "../../src/admin/api-usage.ts";
import { eventRecord } from "../../src/admin/events.ts";
import { keyView } from "../../src/admin/keys.ts";
import { nanos } from "../../src/base/money.ts";
import type { UsageEvent } from "../../src/billing/feed.ts";
import type { KeyRecord } from "../../src/store/store.ts";
import type { UsageRecord } from "../../src/store/usage/record.ts";
import { acct, kid, mid } from "../helpers/ids.ts";

const T1 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const T1_ISO = "2026-01-02T03:04:05.678Z";
const T2 = Date.UTC(2099, 11, 31, 23, 59, 59, 1);
const T2_ISO = "2099-12-31T23:59:59.001Z";

/** The same keys in the same order, with the same values (a missing key is not an undefined one). */
function expectShown(actual: object, expected: Record<string, unknown>): void {
  expect(Object.keys(actual)).toEqual(Object.keys(expected));
  expect(actual).toStrictEqual(expected);
}

describe("accounts and groups", () => {
  test("an account: balance in nanos and USD, what it spent today, created_at", () => {
    const shown = accountView(
      { id: acct(7), name: "acme", balance: nanos(2_500_000_000), budgets: null, createdAt: T1 },
      125,
    );
    expectShown(shown, {
      id: 7,
      name: "acme",
      balance_nanos: 2_500_000_000,
      balance_usd: "2.50",
      spent_today_nanos: 125,
      created_at: T1_ISO,
    });
  });

  test("a group: its model patterns as `models`", () => {
    const shown = groupView({ id: 3, name: "cheap", modelPatterns: ["modelx-*", "other"] });
    expectShown(shown, { id: 3, name: "cheap", models: ["modelx-*", "other"] });
  });
});

describe("keys", () => {
  const key: KeyRecord = {
    id: kid("key_1"),
    name: "ci",
    prefix: "sk-abc",
    account: "acme",
    accountId: acct(7),
    group: "text",
    status: "enabled",
    expiresAt: T2,
    allowIps: ["10.0.0.0/8"],
    dailyCap: nanos(2_500_000_000),
    rpm: 30,
    concurrency: 4,
    tpm: null,
    budgets: null,
    accountBudgets: null,
    createdAt: T1,
    lastUsedAt: T1 + 1,
  };

  test("every setting given: times as ISO strings", () => {
    expectShown(keyView(key), {
      id: "key_1",
      prefix: "sk-abc",
      name: "ci",
      account: "acme",
      group: "text",
      status: "enabled",
      expires_at: T2_ISO,
      allow_ips: ["10.0.0.0/8"],
      daily_cap_nanos: 2_500_000_000,
      rpm: 30,
      concurrency: 4,
      tpm: null,
      created_at: T1_ISO,
      last_used_at: "2026-01-02T03:04:05.679Z",
    });
  });

  test("none given: nulls, no IP list as [], and a past expiry shows `expired`", () => {
    const bare = {
      ...key,
      expiresAt: T1,
      allowIps: null,
      dailyCap: null,
      rpm: null,
      concurrency: null,
      tpm: null,
    };
    expectShown(keyView({ ...bare, lastUsedAt: null }), {
      id: "key_1",
      prefix: "sk-abc",
      name: "ci",
      account: "acme",
      group: "text",
      status: "expired",
      expires_at: T1_ISO,
      allow_ips: [],
      daily_cap_nanos: null,
      rpm: null,
      concurrency: null,
      tpm: null,
      created_at: T1_ISO,
      last_used_at: null,
    });
    expect(keyView({ ...bare, expiresAt: null, status: "revoked" })).toMatchObject({
      status: "revoked",
      expires_at: null,
    });
  });
});

describe("notifications", () => {
  test("a channel: never its secret", () => {
    const channel = {
      id: 4,
      accountId: null,
      kind: "webhook" as const,
      target: "https://hooks.example/x",
      secret: "whsec_hidden",
      events: ["balance.low"],
      balanceThreshold: nanos(1_000),
      enabled: true,
      createdAt: T1,
    };
    expectShown(channelView(channel), {
      id: 4,
      account_id: null,
      kind: "webhook",
      target: "https://hooks.example/x",
      events: ["balance.low"],
      balance_threshold_nanos: 1_000,
      enabled: true,
      created_at: T1_ISO,
    });
    expect(channelView({ ...channel, accountId: acct(7), balanceThreshold: null })).toMatchObject({
      account_id: 7,
      balance_threshold_nanos: null,
    });
  });

  test("a delivery: its attempts, last status and error, both times", () => {
    const delivery = {
      id: "dlv_1",
      channelId: 4,
      event: "balance.low",
      payload: { balance_nanos: 5 },
      state: "failed" as const,
      attempts: 3,
      lastStatus: 500,
      lastError: "HTTP 500",
      createdAt: T1,
      updatedAt: T2,
    };
    expectShown(deliveryView(delivery), {
      id: "dlv_1",
      channel_id: 4,
      event: "balance.low",
      state: "failed",
      attempts: 3,
      last_status: 500,
      last_error: "HTTP 500",
      payload: { balance_nanos: 5 },
      created_at: T1_ISO,
      updated_at: T2_ISO,
    });
    expect(deliveryView({ ...delivery, lastStatus: null, lastError: null })).toMatchObject({
      last_status: null,
      last_error: null,
    });
  });
});

test("an admin token: never its hash", () => {
  const shown = tokenView({ id: "adm_1", name: "ops", prefix: "mga-abcdef", revoked: false, createdAt: T1 });
  expectShown(shown, { id: "adm_1", name: "ops", prefix: "mga-abcdef", revoked: false, created_at: T1_ISO });
});

describe("usage, requests and audit", () => {
  test("a usage bucket", () => {
    const bucket = {
      bucket: "2026-01-02",
      requests: 10,
      errors: 1,
      inputTokens: 100,
      outputTokens: 50,
      generations: 2,
      audioMs: 90_500,
      characters: 4_096,
      costNanos: 999,
    };
    expectShown(usageView(bucket), {
      bucket: "2026-01-02",
      requests: 10,
      errors: 1,
      input_tokens: 100,
      output_tokens: 50,
      generations: 2,
      audio_ms: 90_500,
      characters: 4_096,
      cost_nanos: 999,
    });
  });

  const row: UsageRecord = {
    requestId: "req_1",
    keyId: kid("key_1"),
    accountId: acct(7),
    model: mid("modelx-5.4"),
    endpoint: "/v1/chat/completions",
    stream: true,
    status: 200,
    inputTokens: 100,
    cachedInputTokens: 20,
    outputTokens: 50,
    reasoningTokens: 10,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    generations: 1,
    toolCalls: { web_search: 2 },
    costNanos: nanos(999),
    usageSource: "reported",
    channels: ["sim"],
    latencyMs: 120,
    ttfbMs: 30,
    clientAddress: "10.0.0.1",
    endUser: null,
    detail: null,
    createdAt: T1,
  };

  test("a recent request: tool calls as an object, {} when none ran", () => {
    const expected = {
      request_id: "req_1",
      client_request_id: null,
      key_id: "key_1",
      account_id: 7,
      model: "modelx-5.4",
      alias: null,
      endpoint: "/v1/chat/completions",
      stream: true,
      status: 200,
      input_tokens: 100,
      cached_input_tokens: 20,
      output_tokens: 50,
      reasoning_tokens: 10,
      generations: 1,
      tool_calls: { web_search: 2 },
      audio_ms: 0,
      characters: 0,
      cost_nanos: 999,
      cache_hit: false,
      latency_ms: 120,
      ttfb_ms: 30,
      created_at: T1_ISO,
    };
    expectShown(requestView(row), expected);
    expectShown(requestView({ ...row, alias: "gpt-4o", cacheHit: true }), {
      ...expected,
      alias: "gpt-4o",
      cache_hit: true,
    });
    const { toolCalls: _none, ...noTools } = row;
    expectShown(requestView({ ...noTools, ttfbMs: null }), {
      ...expected,
      tool_calls: {},
      ttfb_ms: null,
    });
  });

  test("an audit entry: its time as `at`", () => {
    const entry = { id: 9, actor: "admin:adm_1:ops", action: "key.create", target: "key_1", createdAt: T1 };
    expectShown(auditView({ ...entry, detail: { name: "ci" } }), {
      id: 9,
      actor: "admin:adm_1:ops",
      action: "key.create",
      target: "key_1",
      detail: { name: "ci" },
      at: T1_ISO,
    });
    expect(auditView({ ...entry, detail: null }).detail).toBeNull();
  });
});

describe("the live event record", () => {
  const event: UsageEvent = {
    requestId: "req_1",
    at: T1,
    method: "POST",
    endpoint: "/v1/chat/completions",
    keyId: kid("key_1"),
    keyName: "ci",
    accountId: acct(7),
    model: mid("modelx-5.4"),
    stream: false,
    status: 200,
    inputTokens: 100,
    cachedInputTokens: 20,
    outputTokens: 50,
    reasoningTokens: 10,
    generations: 1,
    toolCalls: { web_search: 1 },
    costNanos: 1_500_000_000,
    usageSource: "reported",
    latencyMs: 120,
    ttfbMs: null,
    channels: ["primary"],
    clientAddress: "127.0.0.1",
    errorCode: "rate_limit_exceeded",
  };
  const expected = {
    request_id: "req_1",
    client_request_id: null,
    at: T1_ISO,
    method: "POST",
    endpoint: "/v1/chat/completions",
    key_id: "key_1",
    key_name: "ci",
    account_id: 7,
    model: "modelx-5.4",
    stream: false,
    status: 200,
    input_tokens: 100,
    cached_input_tokens: 20,
    output_tokens: 50,
    reasoning_tokens: 10,
    generations: 1,
    tool_calls: { web_search: 1 },
    audio_ms: 0,
    characters: 0,
    cost_nanos: 1_500_000_000,
    cost_usd: "1.50",
    usage_source: "reported",
    latency_ms: 120,
    ttfb_ms: null,
    channels: ["primary"],
    client_address: "127.0.0.1",
    error_code: "rate_limit_exceeded",
  };

  test("every field, cost in nanos and USD", () => {
    expectShown(eventRecord(event), expected);
  });

  test("absent tool calls and error code: {} and null", () => {
    const { toolCalls: _t, errorCode: _e, ...bare } = event;
    expectShown(eventRecord(bare), { ...expected, tool_calls: {}, error_code: null });
  });

  test("an audio request: its milliseconds of audio or its speech characters", () => {
    expectShown(eventRecord({ ...event, audioMs: 5000 }), { ...expected, audio_ms: 5000 });
    expectShown(eventRecord({ ...event, characters: 42 }), { ...expected, characters: 42 });
  });
});

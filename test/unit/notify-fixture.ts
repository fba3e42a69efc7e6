// Shared set-up of the notification tests: a fresh SQLite store with an account, keys and usage,
// a local webhook receiver (Bun.serve on 127.0.0.1:0) that checks signatures itself, and a local
// SMTP sink (smtp-server) that keeps every message it receives.
import { Database } from "bun:sqlite";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import * as v from "valibot";
import { createKey } from "../../src/admin/keys.ts";
import type { Nanos } from "../../src/base/types.ts";
import { AdminConfigSchema, type NotificationsConfig } from "../../src/config/admin.ts";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.ts";

export interface Received {
  headers: Headers;
  body: string;
  json: Record<string, unknown>;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Status codes answered for the next requests, in order; 200 once they are used up. */
  answers: number[];
  stop(): void;
}

/** A webhook receiver on a random loopback port. */
export function startReceiver(): Receiver {
  const received: Received[] = [];
  const answers: number[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const body = await request.text();
      received.push({ headers: request.headers, body, json: JSON.parse(body) as Record<string, unknown> });
      return new Response(null, { status: answers.shift() ?? 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, received, answers, stop: () => server.stop(true) };
}

/** What a receiver does with the documented scheme, written independently of src/notify/webhook.ts. */
export function expectedSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  port: number;
  mails: Mail[];
  stop(): Promise<void>;
}

/** An SMTP server on a random loopback port that accepts every message (no TLS, no auth). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { port, mails, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The notifications config with the test's overrides, through the real schema (defaults applied). */
export function notificationsConfig(overrides: Record<string, unknown> = {}): NotificationsConfig {
  return v.parse(AdminConfigSchema, { notifications: overrides }).notifications;
}

export interface World {
  store: SqliteStore;
  /** A second connection to the same file, to write usage records as the billing writer would. */
  db: Database;
  dir: string;
  close(): Promise<void>;
}

/** A migrated store in a temporary directory with account `acme` (10 USD) and group `default`. */
export async function openWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "modelgate-notify-"));
  const file = join(dir, "modelgate.db");
  const store = openSqliteStore(file);
  await store.migrate();
  await store.createAccount("acme", 10_000_000_000 as Nanos);
  await store.setGroup("default", ["*"]);
  const db = new Database(file, { strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  return {
    store,
    db,
    dir,
    async close() {
      db.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a key of account `acme`; returns its id and secret. */
export async function addKey(
  world: World,
  name: string,
  settings: { dailyCap?: number; expiresAt?: number; allowIps?: string[] } = {},
) {
  return createKey(world.store, {
    account: "acme",
    group: "default",
    name,
    expiresAt: settings.expiresAt ?? null,
    allowIps: settings.allowIps ?? [],
    dailyCap: (settings.dailyCap ?? null) as Nanos | null,
    rpm: null,
    concurrency: null,
    tpm: null,
  });
}

/** Records a settled request of `costNanos` for a key, as the billing writer does. */
export function addUsage(world: World, keyId: string, accountId: number, costNanos: number): void {
  world.db
    .query(
      `insert into usage_records (request_id, key_id, account_id, model, endpoint, stream, status,
         cost_nanos, usage_source, created_at)
       values (?, ?, ?, 'modelx-5.5', '/v1/responses', 0, 200, ?, 'reported', ?)`,
    )
    .run(`req_${randomBytes(6).toString("hex")}`, keyId, accountId, costNanos, Date.now());
}

// Sends notifications to channels off the request path: one delivery record per channel and
// notification, attempts retried with exponential backoff, the state recorded after each attempt.
import { randomBytes } from "node:crypto";
import { log } from "../base/log.ts";
import type { NotificationsConfig } from "../config/admin.ts";
import type { AdminStore, NotificationChannel } from "../store/admin.ts";
import type { EmailSender } from "./email.ts";
import { describe, type Notification } from "./payloads.ts";
import { type AttemptResult, postWebhook } from "./webhook.ts";

export class Dispatcher {
  readonly #store: AdminStore;
  readonly #config: NotificationsConfig;
  readonly #email: EmailSender | undefined;
  readonly #pending = new Set<Promise<void>>();
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(
    store: AdminStore,
    config: NotificationsConfig,
    email: EmailSender | undefined,
    sleep: (ms: number) => Promise<void> = (ms) => Bun.sleep(ms),
  ) {
    this.#store = store;
    this.#config = config;
    this.#email = email;
    this.#sleep = sleep;
  }

  /** Starts delivering; returns the delivery id at once. */
  send(channel: NotificationChannel, n: Notification): string {
    const id = `dlv_${randomBytes(8).toString("hex")}`;
    const task = this.#deliver(id, channel, n).catch((error: unknown) => {
      log("error", "notification delivery failed to record", {
        delivery: id,
        error: error instanceof Error ? error.message : String(error),
      });
    });
    this.#pending.add(task);
    void task.finally(() => this.#pending.delete(task));
    return id;
  }

  /** Resolves when every delivery started so far has succeeded or finally failed. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  async #deliver(id: string, channel: NotificationChannel, n: Notification): Promise<void> {
    await this.#store.createDelivery({ id, channelId: channel.id, event: n.type, payload: { ...n } });
    const max = this.#config.max_attempts;
    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt(id, channel, n);
      const final = result.ok || attempt >= max;
      await this.#store.updateDelivery(id, {
        state: result.ok ? "delivered" : final ? "failed" : "pending",
        attempts: attempt,
        lastStatus: result.status,
        lastError: result.error,
      });
      if (final) {
        if (!result.ok) {
          log("warn", "notification not delivered", {
            delivery: id,
            channel: channel.id,
            error: result.error,
          });
        }
        return;
      }
      const delay = this.#config.retry_base_ms * 2 ** (attempt - 1) * (1 + Math.random() * 0.2);
      await this.#sleep(delay);
    }
  }

  async #attempt(id: string, channel: NotificationChannel, n: Notification): Promise<AttemptResult> {
    if (channel.kind === "webhook") {
      return postWebhook(
        channel.target,
        channel.secret,
        JSON.stringify(n),
        { "modelgate-event": n.type, "modelgate-delivery": id },
        this.#config.timeout_ms,
      );
    }
    if (!this.#email) {
      return { ok: false, status: null, error: "no SMTP server configured: set [admin.notifications.smtp]" };
    }
    const { subject, text } = describe(n);
    return this.#email.send(channel.target, subject, text, n.id);
  }
}

// E-mail delivery through SMTP with nodemailer, configured by [admin.notifications.smtp].
import nodemailer, { type Transporter } from "nodemailer";
import type { NotificationsConfig } from "../config/admin.ts";
import type { AttemptResult } from "./webhook.ts";

type Smtp = NonNullable<NotificationsConfig["smtp"]>;

export class EmailSender {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(smtp: Smtp, env: Readonly<Record<string, string | undefined>> = process.env) {
    const password = smtp.password_env ? env[smtp.password_env] : undefined;
    this.#transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.username ? { auth: { user: smtp.username, pass: password ?? "" } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    this.#from = smtp.from;
  }

  /** Sends one message; never throws. */
  async send(to: string, subject: string, text: string, id: string): Promise<AttemptResult> {
    try {
      const info = await this.#transport.sendMail({
        from: this.#from,
        to,
        subject,
        text,
        headers: { "X-Modelgate-Notification": id },
      });
      const rejected = info.rejected?.[0];
      return {
        ok: rejected === undefined,
        status: null,
        error: rejected === undefined ? null : `SMTP server rejected ${String(rejected)}`,
      };
    } catch (error) {
      return { ok: false, status: null, error: error instanceof Error ? error.message : String(error) };
    }
  }

  close(): void {
    this.#transport.close();
  }
}

// E-mail delivery through SMTP with nodemailer, configured by [admin.notifications.smtp].
// nodemailer is loaded with the first message: a gateway that never mails does not pay its memory.
import type { Transporter } from "nodemailer";
import type { NotificationsConfig } from "../config/admin.ts";
import type { AttemptResult } from "./webhook.ts";

type Smtp = NonNullable<NotificationsConfig["smtp"]>;

export class EmailSender {
  readonly #smtp: Smtp;
  readonly #password: string | undefined;
  readonly #from: string;
  #transport: Promise<Transporter> | undefined;

  constructor(smtp: Smtp, env: Readonly<Record<string, string | undefined>> = process.env) {
    this.#smtp = smtp;
    this.#password = smtp.password_env ? env[smtp.password_env] : undefined;
    this.#from = smtp.from;
  }

  #transporter(): Promise<Transporter> {
    this.#transport ??= import("nodemailer").then((nodemailer) => this.#create(nodemailer.createTransport));
    return this.#transport;
  }

  #create(createTransport: typeof import("nodemailer").createTransport): Transporter {
    const smtp = this.#smtp;
    const password = this.#password;
    return createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.username ? { auth: { user: smtp.username, pass: password ?? "" } } : {}),
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
  }

  /** Sends one message; never throws. */
  async send(to: string, subject: string, text: string, id: string): Promise<AttemptResult> {
    try {
      const transport = await this.#transporter();
      const info = await transport.sendMail({
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
    void this.#transport?.then((transport) => transport.close());
  }
}

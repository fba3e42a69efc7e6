// The terminal UI's client of the admin API: typed calls, answers checked by valibot, errors
// turned into messages the UI can show (the API's own message when it gave one).
import * as v from "valibot";
import { AccountView, ApiError, CreatedKey, KeyBudgets, KeyView, ListOf, UsageRow } from "./types.ts";

export interface KeyChange {
  name?: string;
  daily_cap_usd?: string | null;
  rpm?: number | null;
  concurrency?: number | null;
  allow_ips?: string[] | null;
  expires_at?: string | null;
  group?: string;
}

export interface NewKeyInput extends KeyChange {
  account: string;
}

/** What the screens need from a gateway; tests give an in-memory one. */
export interface AdminApi {
  readonly url: string;
  /** The reads take the signal that cancels them (a screen's poll, when the screen goes). */
  listKeys(signal?: AbortSignal): Promise<KeyView[]>;
  createKey(input: NewKeyInput): Promise<KeyView & { secret: string }>;
  setKeyStatus(id: string, status: "enabled" | "revoked"): Promise<KeyView>;
  updateKey(id: string, change: KeyChange): Promise<KeyView>;
  /** A key's budgets and its account's in their current periods (absent: the screen shows none). */
  keyBudgets?(id: string, signal?: AbortSignal): Promise<KeyBudgets>;
  listAccounts(signal?: AbortSignal): Promise<AccountView[]>;
  credit(account: string, amountUsd: string, note: string): Promise<AccountView>;
  usage(by: "model" | "day", days: number, signal?: AbortSignal): Promise<UsageRow[]>;
  announce(title: string, message: string): Promise<number>;
}

export class ApiFailure extends Error {
  override name = "ApiFailure";
}

export class HttpAdminApi implements AdminApi {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  async #call<S extends v.GenericSchema>(
    schema: S,
    method: string,
    path: string,
    body?: unknown,
    cancel?: AbortSignal,
  ) {
    const timeout = AbortSignal.timeout(10_000);
    let response: Response;
    try {
      response = await fetch(`${this.url}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: cancel ? AbortSignal.any([cancel, timeout]) : timeout,
      });
    } catch (error) {
      throw new ApiFailure(
        `gateway unreachable at ${this.url} (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    const json: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const parsed = v.safeParse(ApiError, json);
      throw new ApiFailure(parsed.success ? parsed.output.error.message : `HTTP ${response.status}`);
    }
    const parsed = v.safeParse(schema, json);
    if (!parsed.success) throw new ApiFailure(`unexpected answer from ${path}: ${parsed.issues[0]?.message}`);
    return parsed.output as v.InferOutput<S>;
  }

  async listKeys(signal?: AbortSignal) {
    return (await this.#call(ListOf(KeyView), "GET", "/keys", undefined, signal)).data;
  }
  createKey(input: NewKeyInput) {
    return this.#call(CreatedKey, "POST", "/keys", input);
  }
  setKeyStatus(id: string, status: "enabled" | "revoked") {
    return this.#call(
      KeyView,
      "POST",
      `/keys/${encodeURIComponent(id)}/${status === "revoked" ? "revoke" : "enable"}`,
    );
  }
  updateKey(id: string, change: KeyChange) {
    return this.#call(KeyView, "POST", `/keys/${encodeURIComponent(id)}`, change);
  }
  keyBudgets(id: string, signal?: AbortSignal) {
    return this.#call(KeyBudgets, "GET", `/keys/${encodeURIComponent(id)}`, undefined, signal);
  }
  async listAccounts(signal?: AbortSignal) {
    return (await this.#call(ListOf(AccountView), "GET", "/accounts", undefined, signal)).data;
  }
  credit(account: string, amountUsd: string, note: string) {
    return this.#call(AccountView, "POST", `/accounts/${encodeURIComponent(account)}/credit`, {
      amount_usd: amountUsd,
      note,
    });
  }
  async usage(by: "model" | "day", days: number, signal?: AbortSignal) {
    return (await this.#call(ListOf(UsageRow), "GET", `/usage?by=${by}&days=${days}`, undefined, signal))
      .data;
  }
  async announce(title: string, message: string) {
    const sent = await this.#call(v.object({ deliveries: v.array(v.string()) }), "POST", "/announcements", {
      title,
      message,
    });
    return sent.deliveries.length;
  }
}

// The billing seam every endpoint uses: admit before calling upstream (limits, reservation),
// settle exactly once on every path afterwards. LedgerMeter (ledger.ts) implements it.
import type { Principal } from "../auth/keys.ts";
import type { ModelId, Nanos } from "../base/types.ts";
import type { ModelInfo } from "../catalog/models.ts";
import type { LimiterHealth } from "../limits/limiter.ts";
import type { UsageSource } from "../store/usage/record.ts";
import type { PricedTool, UsageCounts } from "../wire/usage-counts.ts";

// A request's counts and their source are the ones its usage record stores: one definition.
export type { UsageSource } from "../store/usage/record.ts";

/** The priced hosted tools a request carries, read from it for the reservation (src/wire/hosted-tools.ts). */
export interface ToolReserve {
  /**
   * Each priced tool in the request, with its own cap on calls when it has one (Anthropic
   * `max_uses`), for the image generation tool what one call makes (priced from the image table),
   * for the code interpreter its container's memory.
   */
  tools: {
    tool: PricedTool;
    maxUses?: number | undefined;
    image?: ImageToolFacts | undefined;
    /** A code interpreter container's memory in GB (its `memory_limit`; 1 when not given). */
    containerGb?: number | undefined;
  }[];
  /** The cap on all hosted tool calls together (Responses `max_tool_calls`), when given. */
  maxToolCalls?: number | undefined;
}

/** What one call of the Responses image generation tool makes, as its tool definition asks. */
export interface ImageToolFacts {
  /** The tool's `model` when it is a catalog image model, else the configured default prices it. */
  model: ModelId | undefined;
  quality: string;
  size: string;
  /** Progress images streamed before the final one; each is billed as a generation. */
  partialImages: number;
}

/**
 * What an audio request (speech to text, speech) uses in the units its model is priced in (src/billing/cost.ts rule 8);
 * a settlement carries it in its `detail` under these names in snake_case.
 */
export interface AudioUnits {
  /** Milliseconds of audio (per-minute models). */
  audioMs: number;
  audioInputTokens: number;
  textInputTokens: number;
  outputTokens: number;
  /** Characters of input (per-character speech models). */
  characters: number;
  audioOutputTokens: number;
}

export type WorstCase =
  | { kind: "text"; inputTokens: number; maxOutputTokens: number; tools?: ToolReserve | undefined }
  | { kind: "image"; generations: number; quality: string; size: string; inputFidelity?: "low" | "high" }
  | { kind: "audio"; units: AudioUnits };

/** What the meter needs of the calling key: a Principal is one, and so is its copy sent to a cluster primary. */
export type MeteredKey = Pick<
  Principal,
  | "keyId"
  | "keyName"
  | "accountId"
  | "accountName"
  | "group"
  | "dailyCap"
  | "rpm"
  | "concurrency"
  | "tpm"
  | "budgets"
  | "accountBudgets"
>;

export interface AdmitInput {
  /** The gateway's id of the request: unique, it keys the usage record. */
  requestId: string;
  /** The id the client sent (`x-client-request-id` or `x-request-id`), stored beside it. */
  clientRequestId?: string | undefined;
  principal: MeteredKey;
  model: ModelInfo;
  /** The client-facing path, e.g. `/v1/responses`. */
  endpoint: string;
  method: string;
  stream: boolean;
  clientAddress?: string | undefined;
  /** The client's `user` field, kept for audit. */
  endUser?: string | undefined;
  /** The alias the client named when it did not name `model` itself (`[aliases]`), kept in the record. */
  alias?: string | undefined;
  /**
   * A cost known before the answer (a response-cache hit: a fraction of the stored answer's cost):
   * reserved and charged as is, instead of the worst case and the usage's price.
   */
  fixedCost?: Nanos | undefined;
  /** Answered from the response cache: the record is marked so. */
  cacheHit?: boolean | undefined;
  worstCase: WorstCase;
}

export interface Settlement {
  /** The HTTP status the client got (200 for a stream that started, even if it later failed). */
  status: number;
  usage: UsageCounts;
  source: UsageSource;
  /** Channels tried, in order. */
  channels: string[];
  ttfbMs?: number | undefined;
  /** Protocol-specific billing facts (image quality, size, fidelity, …). */
  detail?: Record<string, unknown> | undefined;
}

export interface Admission {
  /** Headers every answer of this request carries (x-ratelimit-*). */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Turns the reservation into the actual cost and releases the request's slots. The first call
   * wins; later calls do nothing. Resolves with the settled cost when the usage record is durable.
   */
  settle(result: Settlement): Promise<Nanos>;
}

/** A key's money figures now (see src/handlers/balance.ts for the JSON built from them). */
export interface BalanceView {
  balance: Nanos;
  /** Reservations of the account's requests in flight. */
  accountReserved: Nanos;
  dailyCap: Nanos | null;
  spentToday: Nanos;
  /** Reservations of this key's requests in flight. */
  keyReserved: Nanos;
  inFlight: number;
  dayStart: number;
  dayEnd: number;
  /** The x-ratelimit-* headers, without counting a request. */
  headers: Readonly<Record<string, string>>;
}

/** One budget in its current period, as the CLI and the admin API show it (nano-USD, ms). */
export interface BudgetFigure {
  period: "daily" | "weekly" | "monthly" | "total";
  limit: Nanos;
  spent: Nanos;
  reserved: Nanos;
  /** What is left for new reservations (never below 0). */
  remaining: Nanos;
  start: number;
  /** When the period ends; null for `total`. */
  end: number | null;
}

export interface Meter {
  /** Checks limits and reserves the worst-case cost; throws a 429 GatewayError when refused. */
  admit(input: AdmitInput): Promise<Admission>;
  /** The calling key's balance, caps and reservations; absent on a meter that keeps no money. */
  balance?(principal: MeteredKey): Promise<BalanceView>;
  /** Puts every settled record in the store now (before reading usage from it). */
  flush?(): Promise<void>;
  /**
   * A key's budgets (its own, or with `scope` "account" its account's) in their current periods:
   * spent, reserved by requests in flight, remaining; absent on a meter that keeps no money.
   */
  budgetFigures?(principal: MeteredKey, scope: "key" | "account"): Promise<BudgetFigure[]>;
  /** Checks the limiter can be reached (a shared one: Redis); throws if not. For /readyz. */
  pingLimiter?(): Promise<void>;
  /** Makes every settled record durable and stops; called once at shutdown. */
  close?(): Promise<void>;
  /** Usage records settled but not yet committed to the store (journal lag), when kept here. */
  backlog?(): number;
  /** The shared limiter's epoch and reconciliation corrections, when it has one. */
  limiterHealth?(): LimiterHealth;
}

export const NO_USAGE: UsageCounts = {
  inputTokens: 0,
  cachedInputTokens: 0,
  cacheWriteTokens: 0,
  cacheWrite1hTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
  generations: 0,
};

/** No audio units: what a request that produced nothing bills (src/billing/cost.ts rule 8). */
export const NO_AUDIO: AudioUnits = {
  audioMs: 0,
  audioInputTokens: 0,
  textInputTokens: 0,
  outputTokens: 0,
  characters: 0,
  audioOutputTokens: 0,
};

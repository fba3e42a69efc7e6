// The Redis limiter's generations, the parts that need no connection: what Redis says of its
// generation (G, read by READ_EPOCH) and of itself (INFO's run_id), whether that copy may be
// trusted for the ledger, and the arguments and answers of a seed (SEED, redis-scripts.ts).
// A copy is trusted only when Redis holds an epoch, begun on the Redis process now running (a
// restart from a snapshot, or a failover, is another run), for this ledger, and the ledger's own
// epoch is the same (a database restored from a backup has an older one).
import type { KeyId } from "../base/types.ts";
import type { LedgerFigures } from "./limiter.ts";

/** Redis's generation as READ_EPOCH answers it. */
export interface EpochState {
  /** 0 when Redis holds none (it lost its data, or never had one). */
  epoch: number;
  run: string;
  ledger: string;
  /** Redis ms when the epoch began. */
  since: number;
  /** Redis's clock when read. */
  redisMs: number;
  /** The epoch each node has acknowledged, by node id. */
  acks: Map<string, number>;
}

export function epochState(reply: unknown): EpochState {
  if (!Array.isArray(reply) || reply.length < 5)
    throw new Error(`redis limiter: unexpected epoch reply ${JSON.stringify(reply)}`);
  const text = reply.map(String);
  const acks = new Map<string, number>();
  for (let i = 5; i + 1 < text.length; i += 2) acks.set(text[i] ?? "", Number(text[i + 1]));
  return {
    epoch: Number(text[0] || 0),
    run: text[1] ?? "",
    ledger: text[2] ?? "",
    since: Number(text[3] || 0),
    redisMs: Number(text[4]),
    acks,
  };
}

/** The run_id line of INFO server: it changes whenever the Redis process starts. */
export function runIdOf(info: unknown): string {
  const id = /run_id:([0-9a-f]+)/.exec(String(info))?.[1];
  if (!id) throw new Error("redis limiter: INFO server has no run_id");
  return id;
}

/** Why Redis's copy is not the ledger's current one, or undefined when it is. */
export function staleReason(
  state: EpochState,
  run: string,
  ledger: { ledger: string; epoch: number },
  ledgerRead: boolean,
): string | undefined {
  if (state.epoch === 0) return "Redis holds no epoch (its data was lost or flushed)";
  if (state.run !== run)
    return "Redis restarted or failed over (another run_id): its data may be an older snapshot";
  if (state.ledger !== ledger.ledger) return "Redis holds the figures of another database under this prefix";
  if (state.epoch < ledger.epoch) return "Redis holds an older epoch than the ledger";
  if (ledgerRead && state.epoch > ledger.epoch)
    return "the ledger's epoch is older than Redis's (database restored)";
  return undefined;
}

/** SEED's arguments for one account in `epoch`, with the ledger's spending of `day` (see SEED). */
export function seedArgs(
  epoch: number,
  figures: LedgerFigures,
  balance: number,
  day: number,
  spent: readonly { keyId: KeyId; spent: number }[],
): string[] {
  const args = [String(epoch), String(figures.revision), String(balance), String(day)];
  args.push(String(figures.journals.size));
  for (const [journal, seq] of figures.journals) args.push(journal, String(seq));
  args.push(String(spent.length));
  for (const key of spent) args.push(key.keyId, String(key.spent));
  return args;
}

/** What a seed changed in one account, when it was seeded before in the same epoch. */
export interface Correction {
  balance: number;
  reserved: number;
  spent: number;
}

/** SEED's answer: the correction it made (zero for a first seed), or why it did nothing. */
export function seedOutcome(reply: unknown): Correction | "behind" | "older figures" {
  if (!Array.isArray(reply)) throw new Error(`redis limiter: unexpected seed reply ${JSON.stringify(reply)}`);
  const n = reply.map(Number);
  if (n[0] === -1) return "behind";
  if (n[0] === -2) return "older figures";
  if (n[7] !== 1) return { balance: 0, reserved: 0, spent: 0 };
  return {
    balance: (n[2] ?? 0) - (n[1] ?? 0),
    reserved: (n[4] ?? 0) - (n[3] ?? 0),
    spent: (n[6] ?? 0) - (n[5] ?? 0),
  };
}

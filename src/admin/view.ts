import type { ToolCalls, UsageCounts } from "../wire/usage-counts.ts";
// What the admin API's views (and `keys list --json`) share: a time as the JSON shows it (ms since
// the epoch → ISO 8601, null left null) and the usage counts the request list and the live event
// feed both show. Each view is a plain function beside its route, returning its object literal:
// the keys in the order clients read them (pinned by test/unit/admin-views.test.ts).

/** A time (ms since the epoch) as the admin API shows it: an ISO 8601 string. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** An optional time as the admin API shows it: an ISO 8601 string, or null. */
export function isoTimeOrNull(ms: number | null): string | null {
  return ms === null ? null : isoTime(ms);
}

/** The usage counts of one request, as its store record or feed event carries them. */
type Counted = Pick<
  UsageCounts,
  "inputTokens" | "cachedInputTokens" | "outputTokens" | "reasoningTokens" | "generations"
> & {
  toolCalls?: ToolCalls | null | undefined;
  audioMs?: number | undefined;
  characters?: number | undefined;
};

/**
 * What one request used, as the request list and the live event feed show it (`{}`: no tool ran;
 * audio milliseconds and speech characters 0 for every other request).
 */
export function usageCounts(row: Counted) {
  return {
    input_tokens: row.inputTokens,
    cached_input_tokens: row.cachedInputTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    generations: row.generations,
    tool_calls: row.toolCalls ?? {},
    audio_ms: row.audioMs ?? 0,
    characters: row.characters ?? 0,
  };
}

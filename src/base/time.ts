// Day boundaries for "spent today" and daily caps: days are UTC days.

/** Milliseconds since the epoch at 00:00 UTC of the day containing `now`. */
export function startOfUtcDay(now = Date.now()): number {
  return now - (now % 86_400_000);
}

/** `YYYY-MM-DD` of the UTC day containing `at`. */
export function utcDay(at: number): string {
  return new Date(at).toISOString().slice(0, 10);
}

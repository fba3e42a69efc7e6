// The data of a stream's last event, read from a whole SSE body (a stream may end with a comment
// line after it — the settled cost — which is not an event).

/** The `data:` of the body's last event, or "{}" when it has none. */
export function lastEventData(sse: string): string {
  const events = sse.split("\n\n").filter((block) => block.startsWith("data: "));
  return events.at(-1)?.slice("data: ".length) ?? "{}";
}

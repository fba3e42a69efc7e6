// The stream relay run to its end as the gateway runs it, for the relay's unit tests: what the
// client received and how the stream ended. Defaults suit a test: no keep-alive within its time,
// the usage chunk kept, aborts and the first byte ignored; any option may be given instead.
import { relayStream, type StreamOutcome, type StreamRelayOptions } from "../../src/pipeline/relay/stream.ts";

export async function relayToEnd(
  options: Pick<StreamRelayOptions, "body" | "tap"> & Partial<Omit<StreamRelayOptions, "onEnd">>,
): Promise<{ text: string; outcome: StreamOutcome | undefined }> {
  let outcome: StreamOutcome | undefined;
  const out = relayStream({
    abort: () => undefined,
    keepaliveMs: 60_000,
    dropUsageChunk: false,
    onFirstByte: () => undefined,
    ...options,
    onEnd: async (o) => {
      outcome = o;
      return undefined;
    },
  });
  const text = await new Response(out).text();
  return { text, outcome };
}

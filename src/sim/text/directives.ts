// Test directives the simulator reads from the last user message, so a test can steer an
// upstream it reaches through the gateway (no side channel needed). The rule:
//
//   sim:error=STATUS   answer with that HTTP status (400, 401, 403, 404, 429, 500, 503, 529) in the
//                      protocol's error shape; 429 and 503 carry `retry-after: 1`
//   sim:drop=N         streams: cut the connection after N content deltas (no terminal event);
//                      non-stream: cut the connection before the body completes
//   sim:ttft=MS        wait MS milliseconds before the first content event
//   sim:tps=N          emit N tokens per second after that (0 or absent: as fast as possible)
//
// Directives are plain words anywhere in the text, e.g. "hello sim:error=429".

export interface Directives {
  errorStatus: number | undefined;
  dropAfter: number | undefined;
  ttftMs: number | undefined;
  tokensPerSecond: number | undefined;
}

const ERROR_STATUSES = new Set([400, 401, 403, 404, 429, 500, 503, 529]);
const PATTERN = /\bsim:(error|drop|ttft|tps)=(\d{1,7})\b/g;

export function readDirectives(text: string): Directives {
  const found: Directives = {
    errorStatus: undefined,
    dropAfter: undefined,
    ttftMs: undefined,
    tokensPerSecond: undefined,
  };
  for (const match of text.matchAll(PATTERN)) {
    const value = Number(match[2]);
    switch (match[1]) {
      case "error":
        if (ERROR_STATUSES.has(value)) found.errorStatus = value;
        break;
      case "drop":
        found.dropAfter = value;
        break;
      case "ttft":
        found.ttftMs = value;
        break;
      case "tps":
        found.tokensPerSecond = value;
        break;
    }
  }
  return found;
}

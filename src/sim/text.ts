// Deterministic text for the simulator: the same seed and prompt always give the same answer,
// with its real token count under the catalog's tokenizer.
import { countTokens, tokenPieces } from "../catalog/tokenizer.ts";
import { hashString, Rng } from "./random.ts";

const WORDS = [
  "the",
  "gateway",
  "routes",
  "each",
  "request",
  "to",
  "a",
  "model",
  "and",
  "streams",
  "answer",
  "back",
  "keys",
  "limits",
  "quota",
  "balance",
  "token",
  "upstream",
  "channel",
  "simulated",
  "reply",
  "with",
  "careful",
  "steady",
  "bright",
  "quiet",
  "river",
  "mountain",
  "signal",
  "pattern",
  "garden",
  "window",
  "of",
  "in",
  "on",
  "for",
  "every",
  "small",
  "large",
  "clear",
  "fast",
  "light",
  "memory",
  "number",
  "north",
  "south",
  "green",
  "blue",
  "simple",
  "exact",
  "record",
  "ledger",
  "stream",
  "event",
] as const;

export interface SimTextRequest {
  /** The seed of the simulator instance. */
  seed: number;
  /** Everything that identifies the request (model, prompt): the same key gives the same text. */
  key: string;
  /** Upper bound on output tokens (e.g. max_output_tokens); undefined means the simulator's own choice. */
  maxTokens?: number | undefined;
}

export interface SimText {
  /** The full text the model would have produced without a limit, cut at maxTokens. */
  text: string;
  /** The text split into tokens: one element per output token. */
  pieces: string[];
  outputTokens: number;
  /** True when maxTokens cut the answer short. */
  truncated: boolean;
}

/** Produces the answer for a request: 12 to 60 tokens of sentences, cut at maxTokens. */
export function simulateText(request: SimTextRequest): SimText {
  const rng = new Rng(hashString(request.key, request.seed));
  const target = rng.int(12, 60);
  const words: string[] = [];
  let sentenceLength = 0;
  while (words.length < target) {
    let word: string = rng.pick(WORDS);
    if (sentenceLength === 0) word = word[0]?.toUpperCase() + word.slice(1);
    sentenceLength++;
    if (sentenceLength >= rng.int(6, 12)) {
      word += ".";
      sentenceLength = 0;
    }
    words.push(word);
  }
  let full = words.join(" ");
  if (!full.endsWith(".")) full += ".";
  const pieces = tokenPieces(full);
  const limit = request.maxTokens;
  const truncated = limit !== undefined && pieces.length > limit;
  const kept = truncated ? pieces.slice(0, limit) : pieces;
  const text = kept.join("");
  return { text, pieces: kept, outputTokens: truncated ? kept.length : countTokens(text), truncated };
}

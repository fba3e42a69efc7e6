// Token counting with the o200k_base vocabulary (shipped inside gpt-tokenizer): used to size
// inputs against context windows and by the simulator to report real token counts.
import { countTokens as count, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

// The request path asks for the same prompt's count more than once (context check, reservation):
// the last answer is kept so a prompt is tokenized once.
let lastText = "";
let lastCount = 0;

/** The number of tokens in `text`. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text === lastText) return lastCount;
  const n = count(text);
  lastText = text;
  lastCount = n;
  return n;
}

/** Splits text into its tokens' texts, so a stream can send exactly one token per delta. */
export function tokenPieces(text: string): string[] {
  return encode(text).map((token) => decode([token]));
}

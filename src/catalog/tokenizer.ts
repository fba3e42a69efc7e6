// Token counting with the o200k_base vocabulary (shipped inside gpt-tokenizer): used to size
// inputs against context windows and by the simulator to report real token counts.
import { countTokens as count, decode, encode } from "gpt-tokenizer/encoding/o200k_base";

/** The number of tokens in `text`. */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : count(text);
}

/** Splits text into its tokens' texts, so a stream can send exactly one token per delta. */
export function tokenPieces(text: string): string[] {
  return encode(text).map((token) => decode([token]));
}

// Reading the benchmark scripts' command-line options.

/** A command-line option that must be a whole number ≥ 1: `fallback` when it is not given. */
export function wholeOption(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a whole number ≥ 1, got "${text}"`);
  return n;
}

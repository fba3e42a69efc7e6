// A function whose module is imported at its first call and kept: `serve` then never evaluates
// code it may not need (the admin API, the image endpoints) until a request asks for it, which
// keeps its idle memory down (docs/benchmarks.md: idle memory).

/** Calls the function `load` resolves to, loading it once, at the first call. */
export function loadedOnFirstCall<A extends unknown[], R>(
  load: () => Promise<(...args: A) => R>,
): (...args: A) => Promise<Awaited<R>> {
  let fn: ((...args: A) => R) | undefined;
  return async (...args: A): Promise<Awaited<R>> => {
    fn ??= await load();
    return await fn(...args);
  };
}

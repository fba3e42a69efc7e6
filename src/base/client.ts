// Whether a request's client is still there to be answered, asked before the request is acted on
// (admitted for billing, or an admin change made). Bun.serve closes a connection on which a
// request arrives pipelined behind one still being answered (oven-sh/bun#33664) and never writes
// the answer ahead; it notices the request behind only on a later turn of the event loop, after
// the body ahead was read. So the question waits one turn (setImmediate: after the loop has polled
// the sockets) before reading the request's abort signal: a request that will not be answered is
// then refused (499) before it is billed or changes anything, instead of done in silence.

/** Resolves true when the client's connection has closed (after one turn of the event loop). */
export async function clientLeft(signal: AbortSignal): Promise<boolean> {
  if (!signal.aborted) await new Promise((resolve) => setImmediate(resolve));
  return signal.aborted;
}

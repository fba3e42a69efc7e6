// A closed loop at concurrency 1 that times every request itself: one raw TCP connection, the next
// request written as soon as the whole answer (its Content-Length) is in, each latency kept. wrk's
// own figures at one connection do not add up on this machine (3 s, 31,954 requests to a bare
// Bun.serve: a mean of 686 µs where 94 µs a request is all the time there was), so the tail of
// concurrency 1 is read from this loop. The loop allocates little per request (one chunk buffer
// from the socket) so its own collections stay rare.

/** Every request's latency in ms, in order, over `seconds` (after the request in flight ends). */
export async function closedLoopC1(
  url: string,
  headers: Record<string, string>,
  body: string,
  seconds: number,
): Promise<number[]> {
  const { hostname, port, pathname } = new URL(url);
  const head = [
    `POST ${pathname} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ].join("\r\n");
  const request = Buffer.from(head + body);
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  let sentAt = 0;
  let received = "";
  let need = -1;
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(s, chunk) {
        received += chunk.toString("latin1");
        if (need < 0) {
          const end = received.indexOf("\r\n\r\n");
          if (end < 0) return;
          const match = /content-length: *(\d+)/i.exec(received.slice(0, end));
          if (!received.startsWith("HTTP/1.1 200") || match === null) {
            reject(new Error(`unexpected answer: ${received.slice(0, 200)}`));
            return;
          }
          need = end + 4 + Number(match[1]);
        }
        if (received.length < need) return;
        const now = performance.now();
        latencies.push(now - sentAt);
        received = "";
        need = -1;
        if (now >= deadline) {
          s.end();
          resolve();
          return;
        }
        sentAt = performance.now();
        s.write(request);
      },
      close() {
        resolve();
      },
      error(_, error) {
        reject(error);
      },
    },
  });
  sentAt = performance.now();
  socket.write(request);
  await promise;
  return latencies;
}

/**
 * The latencies as wrk 4's summary counts them: after the run it "corrects" its histogram for
 * coordinated omission (stats_correct), adding for each latency L of at least twice the mean cycle
 * E the samples L − E, L − 2E, … down to E, as if requests had been due every E. At one connection
 * a pause of P ms thus counts about P ÷ E times instead of once, which is why wrk's p99 at c=1 sits
 * far above the p99 of the requests actually sent when rare pauses are long against the cycle.
 * `expectedMs` is wrk's E: the run's length ÷ its requests.
 */
export function coCorrected(latencies: readonly number[], expectedMs: number): number[] {
  const out = [...latencies];
  if (expectedMs <= 0) return out;
  for (const latency of latencies) {
    if (latency < 2 * expectedMs) continue;
    for (let m = latency - expectedMs; m > expectedMs; m -= expectedMs) out.push(m);
  }
  return out;
}

// A pass-through in front of an upstream (the simulator) that counts the responses still open, so
// a test can see how many calls a limit let through at once.

export interface UpstreamCounts {
  /** Responses whose body has not ended yet. */
  open: number;
  /** The most open at once (a test may reset it to `open`). */
  peak: number;
  /** Calls made so far. */
  opened: number;
}

export interface CountingProxy {
  server: ReturnType<typeof Bun.serve>;
  counts: UpstreamCounts;
}

export function startCountingProxy(target: string): CountingProxy {
  const counts: UpstreamCounts = { open: 0, peak: 0, opened: 0 };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      counts.open++;
      counts.opened++;
      counts.peak = Math.max(counts.peak, counts.open);
      const answer = await fetch(`${target}${url.pathname}${url.search}`, {
        method: request.method,
        headers: request.headers,
        body,
      });
      const done = () => {
        counts.open--;
      };
      if (!answer.body) {
        done();
        return answer;
      }
      const counted = answer.body.pipeThrough(new TransformStream({ flush: done }));
      return new Response(counted, { status: answer.status, headers: answer.headers });
    },
  });
  return { server, counts };
}

// The minimal Bun proxy: Bun.serve + fetch and nothing else, the floor for our runtime.
// Run as its own process: `bun bench/bun-proxy.ts PORT UPSTREAM_URL`; prints `listening PORT`.

const port = Number(process.argv[2] ?? "0");
const upstream = process.argv[3] ?? "http://127.0.0.1:1";

// For bench/gc.ts's elimination runs only: BENCH_PROXY_FUNCTIONS=N compiles N distinct functions
// (run until JIT-compiled, then kept), BENCH_PROXY_BALLAST_MB=M keeps M MB of plain objects: what
// an eden collection's fixed cost grows with (live compiled code) and what it does not (old bytes).
const functions = Number(process.env.BENCH_PROXY_FUNCTIONS ?? 0);
const ballastMb = Number(process.env.BENCH_PROXY_BALLAST_MB ?? 0);
const kept: unknown[] = [];
const compiled: ((x: number) => number)[] = [];
for (let i = 0; i < functions; i++) {
  const f = new Function(
    "x",
    `let s = ${i}; for (let k = 0; k < 20; k++) s += (x ^ k) * ${i % 7}; return s;`,
  );
  for (let r = 0; r < 2000; r++) f(r);
  compiled.push(f as (x: number) => number);
}
// Run every 100 ms, as a server's request path is: code that stops running is dropped by JSC's
// full collections after a while (code aging), and would then no longer be measured.
if (compiled.length > 0) setInterval(() => compiled.reduce((sum, f) => sum + f(1), 0), 100);
for (let i = 0; i < (ballastMb * 1024 * 1024) / 64; i++) kept.push({ i, s: String(i & 1023) });

const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  idleTimeout: 0,
  fetch(request) {
    const url = new URL(request.url);
    return fetch(upstream + url.pathname + url.search, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
  },
});
console.log(`listening ${server.port}`);

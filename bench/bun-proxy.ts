// The minimal Bun proxy: Bun.serve + fetch and nothing else, the floor for our runtime.
// Run as its own process: `bun bench/bun-proxy.ts PORT UPSTREAM_URL`; prints `listening PORT`.

const port = Number(process.argv[2] ?? "0");
const upstream = process.argv[3] ?? "http://127.0.0.1:1";

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

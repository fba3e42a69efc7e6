// The request target as the router sees it. Elysia finds the path in `request.url` by searching
// for "/" from index 11, which assumes a host of at least four characters; a short `Host` (`x`,
// `gw`, `api`), a missing one (Bun then gives a relative URL) or a `#fragment` in the request
// target would make it route on the wrong path. Such requests are re-issued with a URL the router
// reads correctly: the parsed path and query on a fixed host (the `Host` header is kept as sent).

/** Where the router starts reading the path (Elysia's `standardHostname`). */
const ROUTER_PATH_START = 11;
const FALLBACK_ORIGIN = "http://localhost";

/** The URL's path and query as a WHATWG parser sees them, fragment dropped; undefined if unparseable. */
function pathAndQuery(url: string): string | undefined {
  if (!URL.canParse(url, FALLBACK_ORIGIN)) return undefined;
  const parsed = new URL(url, FALLBACK_ORIGIN);
  return `${parsed.pathname}${parsed.search}`;
}

/** Whether the router would read this URL's path as it is (the common case: no allocation). */
export function routerReadsPath(url: string): boolean {
  const scheme = url.indexOf("://");
  if (scheme <= 0) return false;
  const pathStart = url.indexOf("/", scheme + 3);
  return pathStart !== -1 && pathStart === url.indexOf("/", ROUTER_PATH_START) && !url.includes("#");
}

/** The request itself, or the same request (body, headers, signal) under a URL the router reads correctly. */
export function routable(request: Request): Request {
  if (routerReadsPath(request.url)) return request;
  const target = pathAndQuery(request.url) ?? "/";
  const scheme = request.url.startsWith("https://") ? "https://localhost" : FALLBACK_ORIGIN;
  return new Request(`${scheme}${target}`, request);
}

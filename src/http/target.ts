// The request target as the router sees it. Elysia finds the path in `request.url` by searching
// for "/" from index 11, which assumes a host of at least four characters; a short `Host` (`x`,
// `gw`, `api`), a missing one (Bun then gives a relative URL) or a `#fragment` in the request
// target would make it route on the wrong path. Bun also builds `request.url` from any `Host` the
// client sent, so it may not parse at all (`Host: [::1`, `Host: a:99999`, `Host: %zz`); every
// later `new URL(request.url)` would then throw. Such requests are re-issued with a URL the router
// and the handlers read correctly: the path and query the client sent on a fixed host (the `Host`
// header is kept as sent).

/** Where the router starts reading the path (Elysia's `standardHostname`). */
const ROUTER_PATH_START = 11;
const FALLBACK_ORIGIN = "http://localhost";

/** What follows the authority of an absolute URL (all of a relative one), without a fragment. */
function rawTarget(url: string): string {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? 0 : url.indexOf("/", scheme + 3);
  if (start < 0) return "/";
  const hash = url.indexOf("#", start);
  return url.slice(start, hash < 0 ? undefined : hash);
}

/** The path and query the client sent, as a WHATWG parser reads them on a fixed origin. */
function pathAndQuery(url: string): string {
  // The target is appended to the origin, not resolved against it: `//v1/x` stays a path.
  const absolute = `${FALLBACK_ORIGIN}${rawTarget(url)}`;
  if (!URL.canParse(absolute)) return "/";
  const parsed = new URL(absolute);
  return `${parsed.pathname}${parsed.search}`;
}

/** Whether the router would read this URL's path as it is, and the URL parses (the common case: no allocation). */
export function routerReadsPath(url: string): boolean {
  const scheme = url.indexOf("://");
  if (scheme <= 0) return false;
  const pathStart = url.indexOf("/", scheme + 3);
  return (
    pathStart !== -1 &&
    pathStart === url.indexOf("/", ROUTER_PATH_START) &&
    !url.includes("#") &&
    URL.canParse(url)
  );
}

/** The request itself, or the same request (body, headers, signal) under a URL the router reads correctly. */
export function routable(request: Request): Request {
  if (routerReadsPath(request.url)) return request;
  const scheme = request.url.startsWith("https://") ? "https://localhost" : FALLBACK_ORIGIN;
  return new Request(`${scheme}${pathAndQuery(request.url)}`, request);
}

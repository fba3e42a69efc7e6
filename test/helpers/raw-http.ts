// Raw HTTP/1.1 over a TCP socket, for tests that need what fetch normalises away: any Host
// header (or none), a #fragment in the request target, a body that trickles in or stops.
import net from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The host and port of a gateway URL such as http://127.0.0.1:PORT. */
export function hostPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname.replace(/^\[|\]$/g, ""), port: Number(parsed.port) };
}

/** Parses the first response on the wire (Content-Length or chunked body). */
export function parseRaw(text: string): RawResponse {
  const split = text.indexOf("\r\n\r\n");
  const head = text.slice(0, split).split("\r\n");
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = text.slice(split + 4);
  if (headers["transfer-encoding"] === "chunked") {
    let out = "";
    for (let at = 0; ; ) {
      const eol = body.indexOf("\r\n", at);
      const size = Number.parseInt(body.slice(at, eol), 16);
      if (!(size > 0)) break;
      out += body.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
    }
    body = out;
  }
  return { status, headers, body };
}

/**
 * Writes `parts` in order (a number is a pause in milliseconds) and resolves with the response
 * once the server closes the connection or `closeAfterMs` passes.
 */
export function rawExchange(
  url: string,
  parts: (string | Uint8Array | number)[],
  closeAfterMs = 20_000,
): Promise<RawResponse> {
  const { host, port } = hostPort(url);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, host, async () => {
      for (const part of parts) {
        if (typeof part === "number") await Bun.sleep(part);
        else if (!socket.destroyed) socket.write(part);
      }
    });
    const timer = setTimeout(() => socket.destroy(), closeAfterMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      if (text === "") reject(new Error("the server closed the connection without answering"));
      else resolve(parseRaw(text));
    });
  });
}

/** One request written at once, `Connection: close`, with the headers given verbatim. */
export function rawRequest(
  url: string,
  requestLine: string,
  headers: string[],
  body = "",
): Promise<RawResponse> {
  const length = body === "" ? [] : [`Content-Length: ${Buffer.byteLength(body)}`];
  const head = [requestLine, ...headers, ...length, "Connection: close", "", ""].join("\r\n");
  return rawExchange(url, [head + body]);
}

/**
 * A WebSocket upgrade request (`GET path`, the headers verbatim); resolves with the answer's head
 * as soon as it is in (101: the connection is then dropped), or with the whole refusal.
 */
export function rawUpgrade(url: string, path: string, headers: string[]): Promise<RawResponse> {
  const { host, port } = hostPort(url);
  const head = [`GET ${path} HTTP/1.1`, ...headers, "", ""].join("\r\n");
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = net.connect(port, host, () => socket.write(head));
    const timer = setTimeout(() => socket.destroy(new Error(`no answer:\n${text}`)), 10_000);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parseRaw(text));
    };
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const end = text.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
      if (text.startsWith("HTTP/1.1 101") || Buffer.byteLength(text.slice(end + 4)) >= length) done();
    });
    socket.on("close", () => {
      clearTimeout(timer);
      if (text === "") reject(new Error("the server closed the connection without answering"));
      else resolve(parseRaw(text));
    });
    socket.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Every complete response in `text` (read as latin1), in order, and the bytes left over. */
export function parseAllRaw(text: string): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const split = rest.indexOf("\r\n\r\n");
    if (split < 0) break;
    const head = rest.slice(0, split);
    const chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head);
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
    let end: number;
    if (chunked) {
      const last = rest.indexOf("\r\n0\r\n\r\n", split);
      if (last < 0) break;
      end = last + 7;
    } else end = split + 4 + length;
    if (end > rest.length) break;
    responses.push(parseRaw(rest.slice(0, end)));
    rest = rest.slice(end);
  }
  return { responses, rest };
}

/**
 * Writes `parts` in order (a number is a pause in milliseconds) and resolves with every response
 * read once `count` arrived or the server closed the connection (or after `closeAfterMs`).
 */
export function rawResponses(
  url: string,
  parts: (string | Uint8Array | number)[],
  count: number,
  closeAfterMs = 20_000,
): Promise<{ responses: RawResponse[]; closed: boolean }> {
  const { host, port } = hostPort(url);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses: parseAllRaw(Buffer.concat(chunks).toString("latin1")).responses, closed });
    };
    const socket = net.connect(port, host, async () => {
      for (const part of parts) {
        if (typeof part === "number") await Bun.sleep(part);
        else if (!socket.destroyed) socket.write(part);
      }
    });
    const timer = setTimeout(finish, closeAfterMs);
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (parseAllRaw(Buffer.concat(chunks).toString("latin1")).responses.length >= count) finish();
    });
    socket.on("error", () => undefined);
    socket.on("close", () => {
      closed = true;
      finish();
    });
  });
}

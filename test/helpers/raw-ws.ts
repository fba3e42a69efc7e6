// A WebSocket client over a raw TCP socket, for tests that need frames no client library sends:
// a permessage-deflate frame made by hand (a few KB that inflate to megabytes).
import net from "node:net";
import { constants, deflateRawSync } from "node:zlib";
import { hostPort } from "./raw-http.ts";

export interface RawSocket {
  /** The status line and headers of the handshake's answer. */
  handshake: string;
  /** Sends one masked text frame; `compressed` deflates it (RSV1) as permessage-deflate does. */
  sendText(text: string, compressed: boolean): void;
  /** Resolves with the close frame's code once the server closes (1006 when it sent none). */
  closed: Promise<number>;
  /** The text frames received so far. */
  texts: string[];
  destroy(): void;
}

/** Opens a WebSocket on `path` with permessage-deflate offered and `headers` added. */
export function openRawSocket(url: string, path: string, headers: string[]): Promise<RawSocket> {
  const { host, port } = hostPort(url);
  const head = [
    `GET ${path} HTTP/1.1`,
    `Host: ${host}:${port}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Extensions: permessage-deflate",
    ...headers,
    "",
    "",
  ].join("\r\n");
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(head));
    let buffered = Buffer.alloc(0);
    let handshake: string | undefined;
    let closeCode = 1006;
    let onClosed: (code: number) => void = () => undefined;
    const closed = new Promise<number>((done) => {
      onClosed = done;
    });
    const texts: string[] = [];
    const client: RawSocket = {
      handshake: "",
      sendText(text, compressed) {
        const payload = compressed ? deflated(text) : Buffer.from(text);
        socket.write(frame(payload, compressed));
      },
      closed,
      texts,
      destroy: () => socket.destroy(),
    };
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (handshake === undefined) {
        const end = buffered.indexOf("\r\n\r\n");
        if (end < 0) return;
        handshake = buffered.subarray(0, end).toString("latin1");
        buffered = buffered.subarray(end + 4);
        client.handshake = handshake;
        resolve(client);
      }
      for (let parsed = readFrame(buffered); parsed; parsed = readFrame(buffered)) {
        buffered = buffered.subarray(parsed.size);
        if (parsed.opcode === 0x8)
          closeCode = parsed.payload.length >= 2 ? parsed.payload.readUInt16BE(0) : 1005;
        if (parsed.opcode === 0x1) texts.push(parsed.payload.toString("utf8"));
      }
    });
    socket.on("error", (error) => {
      if (handshake === undefined) reject(error);
    });
    socket.on("close", () => {
      if (handshake === undefined) reject(new Error("the server closed the connection during the handshake"));
      onClosed(closeCode);
    });
  });
}

/** permessage-deflate's payload: raw deflate, flushed, without the final 00 00 ff ff. */
function deflated(text: string): Buffer {
  const out = deflateRawSync(Buffer.from(text), { finishFlush: constants.Z_SYNC_FLUSH });
  return out.subarray(0, out.length - 4);
}

function frame(payload: Buffer, compressed: boolean): Buffer {
  const mask = Buffer.from([1, 2, 3, 4]);
  const len = payload.length;
  const size = len < 126 ? [len] : len < 65536 ? [126, len >> 8, len & 0xff] : [127, 0, 0, 0, 0];
  const head = Buffer.from([0x80 | (compressed ? 0x40 : 0) | 0x1, 0x80 | (size[0] ?? 0), ...size.slice(1)]);
  const long = len >= 65536 ? Buffer.alloc(4) : Buffer.alloc(0);
  if (len >= 65536) long.writeUInt32BE(len);
  const masked = Buffer.alloc(len);
  for (let i = 0; i < len; i++) masked[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
  return Buffer.concat([head, long, mask, masked]);
}

function readFrame(buf: Buffer): { opcode: number; payload: Buffer; size: number } | undefined {
  if (buf.length < 2) return undefined;
  const opcode = (buf[0] ?? 0) & 0x0f;
  let len = (buf[1] ?? 0) & 0x7f;
  let at = 2;
  if (len === 126) {
    if (buf.length < 4) return undefined;
    len = buf.readUInt16BE(2);
    at = 4;
  } else if (len === 127) {
    if (buf.length < 10) return undefined;
    len = Number(buf.readBigUInt64BE(2));
    at = 10;
  }
  if (buf.length < at + len) return undefined;
  return { opcode, payload: buf.subarray(at, at + len), size: at + len };
}

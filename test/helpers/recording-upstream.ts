// A recording upstream for contract and dialect tests: an HTTP server on loopback that keeps every
// request it receives (method, path, headers, raw body, parsed JSON or multipart form) and answers
// from a script the test supplies. The script can answer with a whole `Response`, or with raw byte
// slices written one by one (to replay a real server's SSE dialect at any chunk boundary).
// It speaks whatever the test makes it speak: the oracle is the provider's published contract,
// never the gateway's own simulator.

export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** The raw body bytes (empty for GET). */
  raw: Uint8Array;
  /** The body parsed as JSON when the content type says JSON, else undefined. */
  json: unknown;
  /** The body parsed as multipart form data when the content type says so, else undefined. */
  form: MultipartForm | undefined;
}

/** What `Response.formData()` gives (undici's FormData type, which the global one does not accept). */
export type MultipartForm = Awaited<ReturnType<Response["formData"]>>;

/** Raw chunks written to the socket in order, each after an optional pause. */
export interface ScriptedChunks {
  status?: number;
  headers?: Record<string, string>;
  chunks: (string | Uint8Array)[];
  /** Pause between chunks in milliseconds (default 0: chunks still leave as separate writes). */
  gapMs?: number;
}

export type Answer = Response | ScriptedChunks;

export type Script = (request: RecordedRequest) => Answer | Promise<Answer>;

export interface RecordingUpstream {
  url: string;
  /** Every request received so far, oldest first. */
  requests: RecordedRequest[];
  /** The most recent request (throws when none arrived: a test expecting one fails clearly). */
  last(): RecordedRequest;
  /** Replaces the script for the requests that follow. */
  answer(script: Script): void;
  /** Forgets the recorded requests. */
  clear(): void;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

/** Splits `text` into slices of `size` bytes (UTF-8), cutting inside multi-byte characters too. */
export function byteSlices(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const slices: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) slices.push(bytes.slice(i, i + size));
  return slices;
}

function chunkedBody(script: ScriptedChunks): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (index >= script.chunks.length) {
        controller.close();
        return;
      }
      if (index > 0 && script.gapMs) await Bun.sleep(script.gapMs);
      const chunk = script.chunks[index++];
      controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
    },
  });
}

async function record(request: Request): Promise<RecordedRequest> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const raw = new Uint8Array(request.method === "GET" ? new ArrayBuffer(0) : await request.arrayBuffer());
  const type = headers["content-type"] ?? "";
  let json: unknown;
  let form: MultipartForm | undefined;
  if (type.includes("json") && raw.length > 0) json = JSON.parse(new TextDecoder().decode(raw));
  else if (type.startsWith("multipart/form-data"))
    form = await new Response(raw, { headers: { "content-type": type } }).formData();
  return { method: request.method, path: `${url.pathname}${url.search}`, headers, raw, json, form };
}

/** Starts a recording upstream on a random loopback port. */
export function startRecordingUpstream(script: Script): RecordingUpstream {
  let current = script;
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const recorded = await record(request);
      requests.push(recorded);
      const answer = await current(recorded);
      if (answer instanceof Response) return answer;
      return new Response(chunkedBody(answer), {
        status: answer.status ?? 200,
        headers: answer.headers ?? { "content-type": "text/event-stream" },
      });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    last() {
      const request = requests.at(-1);
      if (request === undefined) throw new Error("the recording upstream received no request");
      return request;
    },
    answer(next) {
      current = next;
    },
    clear() {
      requests.length = 0;
    },
    async stop() {
      await server.stop(true);
    },
  };
}

// How the providers bill a request's input, written from their published rules and independent
// of the gateway's code (gpt-tokenizer for text): the oracle a recording upstream uses to report
// usage "as the real provider would". OpenAI: the cookbook's count for chat messages (3 tokens per
// message plus its role, 1 per name, 3 for the reply), function definitions as the cookbook counts
// them, images by the tile formula, structured-output schemas as their JSON. Anthropic: text, the
// tool-use system prompt (346 tokens), tool definitions and output schemas, images by area (width × height / 750 after scaling to 1568 pixels on the long
// edge and ~1.15 megapixels). An image URL that is not inline says its size in its name
// (`…/640x480.png`), standing for the file the provider would fetch.
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const ORDINARY = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export const tokens = (text: string | undefined): number =>
  text === undefined || text === "" ? 0 : encode(text, ORDINARY).length;

/** A PNG that is only its signature and header chunk: enough for a size to be read. */
export function pngHeader(width: number, height: number): Uint8Array {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, 0], 24);
  return bytes;
}

export const pngDataUrl = (width: number, height: number): string =>
  `data:image/png;base64,${Buffer.from(pngHeader(width, height)).toString("base64")}`;

interface Size {
  width: number;
  height: number;
}

function sizeOf(url: string | undefined, data?: string): Size | undefined {
  const base64 = data ?? (url?.startsWith("data:") ? url.slice(url.indexOf(",") + 1) : undefined);
  if (base64 !== undefined) {
    const b = Buffer.from(base64, "base64");
    return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  const named = /(\d+)x(\d+)\.png$/.exec(url ?? "");
  return named ? { width: Number(named[1]), height: Number(named[2]) } : undefined;
}

export function openaiImage(detail: string | undefined, size: Size): number {
  if (detail === "low") return 85;
  let { width: w, height: h } = size;
  if (Math.max(w, h) > 2048) {
    const s = 2048 / Math.max(w, h);
    [w, h] = [Math.floor(w * s), Math.floor(h * s)];
  }
  if (Math.min(w, h) > 768) {
    const s = 768 / Math.min(w, h);
    [w, h] = [Math.floor(w * s), Math.floor(h * s)];
  }
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

export function anthropicImage(size: Size): number {
  let { width: w, height: h } = size;
  const s = Math.min(1, 1568 / Math.max(w, h), Math.sqrt(1_150_000 / (w * h)));
  [w, h] = [Math.max(1, Math.floor(w * s)), Math.max(1, Math.floor(h * s))];
  return Math.ceil((w * h) / 750);
}

/** The cookbook's count of OpenAI function definitions. */
function openaiFunctions(tools: unknown[]): number {
  let n = 0;
  for (const raw of tools) {
    const t = obj(raw);
    const fn = t.function === undefined ? t : obj(t.function);
    n += 7 + tokens(`${str(fn.name) ?? ""}:${str(fn.description) ?? ""}`);
    const props = obj(obj(fn.parameters).properties);
    if (Object.keys(props).length > 0) n += 3;
    for (const [key, value] of Object.entries(props)) {
      const p = obj(value);
      n += 3 + tokens(`${key}:${str(p.type) ?? ""}:${str(p.description) ?? ""}`);
      const values = arr(p.enum);
      if (values.length > 0) n -= 3;
      for (const item of values) n += 3 + tokens(String(item));
    }
    n += 12;
  }
  return n;
}

function openaiPart(raw: unknown): number {
  const p = obj(raw);
  const text = str(p.text) ?? str(p.refusal);
  if (text !== undefined) return tokens(text);
  if (p.type === "image_url") {
    const image = obj(p.image_url);
    return openaiImage(str(image.detail), sizeOf(str(image.url)) ?? { width: 4096, height: 4096 });
  }
  if (p.type === "input_image")
    return openaiImage(str(p.detail), sizeOf(str(p.image_url)) ?? { width: 4096, height: 4096 });
  return tokens(JSON.stringify(p));
}

const openaiContent = (c: unknown): number =>
  typeof c === "string" ? tokens(c) : arr(c).reduce((n: number, p) => n + openaiPart(p), 0);

/** Input tokens OpenAI bills for a Chat Completions body. */
export function openaiChatInput(body: Obj): number {
  let n = 3;
  for (const raw of arr(body.messages)) {
    const m = obj(raw);
    n += 3 + tokens(str(m.role)) + openaiContent(m.content);
    if (typeof m.name === "string") n += 1 + tokens(m.name);
    for (const call of arr(m.tool_calls)) {
      const fn = obj(obj(call).function);
      n += tokens(str(fn.name)) + tokens(str(fn.arguments));
    }
  }
  const format = obj(body.response_format).json_schema;
  return n + openaiFunctions(arr(body.tools)) + (format === undefined ? 0 : tokens(JSON.stringify(format)));
}

/** Input tokens OpenAI bills for a Responses body. */
export function openaiResponsesInput(body: Obj): number {
  let n = 3;
  if (typeof body.instructions === "string") n += 4 + tokens(body.instructions);
  const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : arr(body.input);
  for (const raw of input) {
    const item = obj(raw);
    n += 3;
    if (item.type === "function_call") n += tokens(str(item.name)) + tokens(str(item.arguments));
    else if (item.type === "function_call_output") n += openaiContent(item.output);
    else n += tokens(str(item.role)) + openaiContent(item.content);
  }
  const format = obj(obj(body.text).format);
  const schema = format.type === "json_schema" ? tokens(JSON.stringify(format)) : 0;
  return n + schema + openaiFunctions(arr(body.tools).filter((t) => obj(t).type === "function"));
}

function anthropicBlock(raw: unknown): number {
  const b = obj(raw);
  if (b.type === "text") return tokens(str(b.text));
  if (b.type === "image") {
    const source = obj(b.source);
    return anthropicImage(sizeOf(str(source.url), str(source.data)) ?? { width: 4096, height: 4096 });
  }
  if (b.type === "tool_use") return tokens(str(b.name)) + tokens(JSON.stringify(b.input));
  if (b.type === "tool_result")
    return typeof b.content === "string" ? tokens(b.content) : anthropicContent(b.content);
  return tokens(JSON.stringify(b));
}

function anthropicContent(c: unknown): number {
  return typeof c === "string" ? tokens(c) : arr(c).reduce((n: number, b) => n + anthropicBlock(b), 0);
}

/** Input tokens Anthropic bills for a Messages body. */
export function anthropicInput(body: Obj): number {
  let n = anthropicContent(body.system);
  for (const raw of arr(body.messages)) n += 3 + anthropicContent(obj(raw).content);
  const tools = arr(body.tools);
  if (tools.length > 0) n += 346;
  for (const t of tools) n += tokens(JSON.stringify(t));
  const format = obj(body.output_config).format;
  return n + (format === undefined ? 0 : tokens(JSON.stringify(format)));
}

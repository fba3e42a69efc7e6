// The conversions between the text protocols by name: every pair goes through the internal form
// (src/wire/text-form.ts; the contract in src/wire/translate/convert.ts), each side by its
// protocol's record.
import type { IrReply, IrRequest } from "../wire/text-form.ts";
import {
  asObject,
  type Converted,
  type ReplyReader,
  type ReplyWriter,
  replyEvents,
} from "../wire/translate/convert.ts";
import type { Obj } from "../wire/translate/narrow.ts";
import { checkReply } from "../wire/translate/reply-check.ts";
import { protocolOf, type TextProtocol } from "./index.ts";

export { readChatRequest, viewOfChat } from "../wire/translate/chat-request.ts";
export { readMessagesRequest, viewOfMessages } from "../wire/translate/messages-request.ts";
export { readResponsesRequest, viewOfResponses } from "../wire/translate/responses-request.ts";

/** The request body in `to` for the internal form; `defaultMaxTokens` fills Messages' required cap. */
export function writeRequest(to: TextProtocol, ir: IrRequest, model: string, defaultMaxTokens: number): Obj {
  return protocolOf(to).translate.writeRequest(ir, model, defaultMaxTokens);
}

export function readReply(from: TextProtocol, json: Obj): IrReply {
  return protocolOf(from).translate.readReply(json);
}

export function replyReader(from: TextProtocol): ReplyReader {
  return protocolOf(from).translate.reader();
}

/**
 * A writer for the client's protocol; `model` is the id the client asked for, `request` the client's
 * body (a Responses answer echoes its parameters, as the API does); `usageChunk`, whether a Chat
 * stream ends with the usage-only chunk (a client asks for it with `stream_options.include_usage`).
 */
export function replyWriter(
  to: TextProtocol,
  model: string,
  inputEstimate: number,
  request?: Obj,
  usageChunk = true,
): ReplyWriter {
  return protocolOf(to).translate.writer(model, inputEstimate, request, usageChunk);
}

/**
 * An upstream's parsed JSON answer in `from`, rewritten as the complete answer of `to`; a typed
 * error when it is not an object or lacks a field the protocol requires (reply-check.ts: a tool
 * call's id and name); other missing fields take neutral values.
 */
export function tryTranslateAnswer(
  from: TextProtocol,
  to: TextProtocol,
  json: unknown,
  model: string,
  inputEstimate: number,
  request?: Obj,
): Converted<Obj> {
  const object = asObject(json);
  if (!object.ok) return object;
  const answer = checkReply(protocolOf(from).translate.toolCalls, object.value);
  if (!answer.ok) return answer;
  return { ok: true, value: translateAnswer(from, to, answer.value, model, inputEstimate, request) };
}

/** A complete upstream answer object in `from`, rewritten as the complete answer of `to`. */
export function translateAnswer(
  from: TextProtocol,
  to: TextProtocol,
  json: Obj,
  model: string,
  inputEstimate: number,
  request?: Obj,
): Obj {
  const writer = replyWriter(to, model, inputEstimate, request);
  for (const event of replyEvents(readReply(from, json))) writer.push(event);
  return writer.answer();
}

// The public entry of the conversions between the three text protocols and the internal form
// (../text-form.ts; their contract in convert.ts): request heads and bodies, complete answers, and
// stream readers / writers. Every protocol pair goes through the internal form; each table is a
// Record over TextProtocol (the writers' switch must return), so a new protocol must decide here.
import type { IrReply, IrRequest, TextProtocol } from "../text-form.ts";
import { ChatReader, ChatWriter, readChatReply } from "./chat-reply.ts";
import { writeChatRequest } from "./chat-request.ts";
import { asObject, type Converted, type ReplyReader, type ReplyWriter, replyEvents } from "./convert.ts";
import { MessagesReader, MessagesWriter, readMessagesReply } from "./messages-reply.ts";
import { writeMessagesRequest } from "./messages-request.ts";
import type { Obj } from "./narrow.ts";
import { checkReply } from "./reply-check.ts";
import { ResponsesReader, readResponsesReply } from "./responses-reader.ts";
import { writeResponsesRequest } from "./responses-request.ts";
import { ResponsesWriter } from "./responses-writer.ts";

export { readChatRequest, viewOfChat } from "./chat-request.ts";
export { readMessagesRequest, viewOfMessages } from "./messages-request.ts";
export { readResponsesRequest, viewOfResponses } from "./responses-request.ts";

const REQUEST_WRITERS: Record<TextProtocol, (ir: IrRequest, model: string, defaultMaxTokens: number) => Obj> =
  {
    responses: writeResponsesRequest,
    chat: writeChatRequest,
    messages: writeMessagesRequest,
  };

/** The request body in `to` for the internal form; `defaultMaxTokens` fills Messages' required cap. */
export function writeRequest(to: TextProtocol, ir: IrRequest, model: string, defaultMaxTokens: number): Obj {
  return REQUEST_WRITERS[to](ir, model, defaultMaxTokens);
}

const REPLY_READERS: Record<TextProtocol, (json: Obj) => IrReply> = {
  responses: readResponsesReply,
  chat: readChatReply,
  messages: readMessagesReply,
};

export function readReply(from: TextProtocol, json: Obj): IrReply {
  return REPLY_READERS[from](json);
}

const STREAM_READERS: Record<TextProtocol, () => ReplyReader> = {
  responses: () => new ResponsesReader(),
  chat: () => new ChatReader(),
  messages: () => new MessagesReader(),
};

export function replyReader(from: TextProtocol): ReplyReader {
  return STREAM_READERS[from]();
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
  // A switch, not a table: each writer takes other arguments. It must return, so it stays exhaustive.
  switch (to) {
    case "responses":
      return new ResponsesWriter(model, request);
    case "chat":
      return new ChatWriter(model, usageChunk);
    case "messages":
      return new MessagesWriter(model, inputEstimate);
  }
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
  const answer = checkReply(from, object.value);
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

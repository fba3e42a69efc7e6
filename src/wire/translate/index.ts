// The public entry of translation between the three text protocols, always through the internal
// form (ir.ts): request bodies, complete answers, and stream readers / writers.
import type { TextProtocol } from "../text-view.ts";
import { ChatReader, ChatWriter, readChatReply } from "./chat-reply.ts";
import { writeChatRequest } from "./chat-request.ts";
import { type IrReply, type IrRequest, type ReplyReader, type ReplyWriter, replyEvents } from "./ir.ts";
import { MessagesReader, MessagesWriter, readMessagesReply } from "./messages-reply.ts";
import { writeMessagesRequest } from "./messages-request.ts";
import type { Obj } from "./narrow.ts";
import { ResponsesReader, readResponsesReply } from "./responses-reader.ts";
import { writeResponsesRequest } from "./responses-request.ts";
import { ResponsesWriter } from "./responses-writer.ts";

export { readChatRequest } from "./chat-request.ts";
export type { IrRequest } from "./ir.ts";
export { readMessagesRequest } from "./messages-request.ts";
export { readResponsesRequest } from "./responses-request.ts";

/** The request body in `to` for the internal form; `defaultMaxTokens` fills Messages' required cap. */
export function writeRequest(to: TextProtocol, ir: IrRequest, model: string, defaultMaxTokens: number): Obj {
  switch (to) {
    case "responses":
      return writeResponsesRequest(ir, model);
    case "chat":
      return writeChatRequest(ir, model);
    case "messages":
      return writeMessagesRequest(ir, model, defaultMaxTokens);
  }
}

export function readReply(from: TextProtocol, json: Obj): IrReply {
  switch (from) {
    case "responses":
      return readResponsesReply(json);
    case "chat":
      return readChatReply(json);
    case "messages":
      return readMessagesReply(json);
  }
}

export function replyReader(from: TextProtocol): ReplyReader {
  switch (from) {
    case "responses":
      return new ResponsesReader();
    case "chat":
      return new ChatReader();
    case "messages":
      return new MessagesReader();
  }
}

/**
 * A writer for the client's protocol; `model` is the id the client asked for, `request` the client's
 * body (a Responses answer echoes its parameters, as the API does).
 */
export function replyWriter(
  to: TextProtocol,
  model: string,
  inputEstimate: number,
  request?: Obj,
): ReplyWriter {
  switch (to) {
    case "responses":
      return new ResponsesWriter(model, request);
    case "chat":
      return new ChatWriter(model);
    case "messages":
      return new MessagesWriter(model, inputEstimate);
  }
}

/** A complete upstream answer in `from`, rewritten as the complete answer of `to`. */
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

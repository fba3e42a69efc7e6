// The text families: every text model is served on each text protocol's path (src/protocols/);
// the 400 for one sent elsewhere names the paths below.
import { ALL_PROTOCOLS, PROTOCOLS, type TextProtocol } from "../../protocols/index.ts";
import type { EndpointRecord } from "../record.ts";

const paths = Object.fromEntries(ALL_PROTOCOLS.map((record) => [record.name, record.path])) as Record<
  TextProtocol,
  string
>;

export const text: EndpointRecord<"text", TextProtocol> = {
  family: "text",
  modelNoun: "a text model",
  servedOn: `POST ${PROTOCOLS.responses.path} or ${PROTOCOLS.chat.path}`,
  paths,
};

export const messages: EndpointRecord<"messages", TextProtocol> = {
  family: "messages",
  modelNoun: "a text model",
  servedOn: `POST ${PROTOCOLS.messages.path} or ${PROTOCOLS.chat.path}`,
  paths,
};

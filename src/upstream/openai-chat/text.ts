// The OpenAI Chat Completions upstream (channel kind "openai-chat", also every OpenAI-compatible
// server): `POST {base_url}/chat/completions` with a bearer credential, the body bent last to the
// server's dialect (dialects.ts, from the channel's preset quirks).
import type { Channel } from "../channels.ts";
import { bearer, type HttpChannelConfig, postText } from "../post-text.ts";
import type { TextCall } from "../text-call.ts";
import { applyDialect } from "./dialects.ts";

export function sendChat(channel: Channel, config: HttpChannelConfig, call: TextCall): Promise<Response> {
  const body = applyDialect(channel.quirks, call.body, call.json);
  return postText(config, "/chat/completions", bearer(call.credential), call, body);
}

// The OpenAI Responses upstream (channel kind "openai-responses"): `POST {base_url}/responses`
// with a bearer credential. Its answers and events are read by the relay (src/pipeline/relay).
import { bearer, type HttpChannelConfig, postText } from "../post-text.ts";
import type { TextCall } from "../text-call.ts";

export function sendResponses(config: HttpChannelConfig, call: TextCall): Promise<Response> {
  return postText(config, "/responses", bearer(call.credential), call);
}

// POST /v1/audio/speech as a table row: the JSON body decoded (src/wire/speech.ts: input within
// 4,096 characters, speed 0.25–4), the model a speech model the key may use that takes what is
// asked (the voice, instructions, SSE), the input counted, then the speech run
// (src/pipeline/speech.ts).
import { countTokens } from "../catalog/tokenizer.ts";
import { speech } from "../endpoints/speech/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { requireFamily, requireModel } from "../pipeline/model.ts";
import { runSpeech } from "../pipeline/speech.ts";
import { GatewayError } from "../wire/errors.ts";
import { parseJson } from "../wire/json.ts";
import { characterCount, decodeSpeechBody } from "../wire/speech.ts";

function bad(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/** The route's row; its body is read by the edge (`withBody` in src/server.ts). */
export function createSpeech(ctx: RequestContext, gateway: Gateway, raw: Uint8Array): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const body = decodeSpeechBody(parseJson(raw));
  const model = requireFamily(
    requireModel(principal, body.model, gateway.aliases),
    ["speech"],
    speech.paths.speech,
  );
  const facts = model.speech;
  if (facts === undefined) throw new Error(`speech model ${model.id} has no facts`);
  if (typeof body.voice === "string" && !facts.voices.includes(body.voice)) {
    throw bad(
      `voice ${JSON.stringify(body.voice)} is not a voice of \`${model.id}\`; use one of ${facts.voices.join(", ")}`,
      "voice",
    );
  }
  if (body.instructions !== undefined && !facts.instructions) {
    throw bad(
      `\`${model.id}\` takes no instructions; leave them out or use modelx-tts-4o-mini`,
      "instructions",
    );
  }
  if (body.stream_format === "sse" && !facts.sse) {
    throw bad(
      `\`${model.id}\` does not stream sse; use stream_format audio or modelx-tts-4o-mini`,
      "stream_format",
    );
  }
  const textTokens = countTokens(body.input) + countTokens(body.instructions ?? "");
  return runSpeech(ctx, gateway, {
    alias: body.model === model.id ? undefined : body.model,
    principal,
    model,
    body,
    characters: characterCount(body.input),
    textTokens,
  });
}

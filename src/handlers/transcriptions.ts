// POST /v1/audio/transcriptions and /v1/audio/translations as table rows: the multipart upload
// read with its 25 MB cap (audio-upload.ts), the fields decoded (src/wire/transcriptions.ts), the
// model a transcription model the key may use that does what is asked (translates, answers the
// format, streams), then the speech-to-text run (src/pipeline/transcriptions.ts).
import { speechToText } from "../endpoints/audio/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { requireFamily, requireModel } from "../pipeline/model.ts";
import { runTranscription } from "../pipeline/transcriptions.ts";
import { AUDIO_TYPES } from "../wire/audio.ts";
import { GatewayError } from "../wire/errors.ts";
import { type AudioTask, decodeTranscriptionFields } from "../wire/transcriptions.ts";
import { readAudioUpload } from "./audio-upload.ts";

function bad(message: string, param: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

async function serve(ctx: RequestContext, gateway: Gateway, task: AudioTask): Promise<Response> {
  const path = speechToText.paths[task];
  const principal = authenticate(ctx, gateway);
  const upload = await readAudioUpload(ctx.request, path);
  const fields = decodeTranscriptionFields(upload.fields, task, path);
  const model = requireFamily(
    requireModel(principal, fields.model, gateway.aliases),
    ["transcription"],
    path,
  );
  const facts = model.transcription;
  if (facts === undefined) throw new Error(`transcription model ${model.id} has no facts`);
  if (task === "translation" && !facts.translates) {
    throw bad(`\`${model.id}\` does not translate; use modelx-transcribe-1 on ${path}`, "model");
  }
  if (!(facts.formats as readonly string[]).includes(fields.responseFormat)) {
    throw bad(
      `response_format ${fields.responseFormat} is not produced by \`${model.id}\`; it answers ${facts.formats.join(", ")}`,
      "response_format",
    );
  }
  if (fields.stream && !facts.streams) {
    throw bad(
      `\`${model.id}\` cannot stream; leave stream out or use a streaming model such as modelx-transcribe-4o`,
      "stream",
    );
  }
  if (fields.include.length > 0 && facts.billing !== "tokens") {
    throw bad(
      `include[] logprobs is only answered by the token-billed models, not \`${model.id}\``,
      "include",
    );
  }
  const file = upload.file;
  if (file === undefined)
    throw bad(`file is required: attach the audio (${AUDIO_TYPES}) as the file part`, "file");
  const alias = fields.model === model.id ? undefined : fields.model;
  return runTranscription(ctx, gateway, { principal, model, alias, task, path, fields, file });
}

export function createTranscription(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serve(ctx, gateway, "transcription");
}

export function createTranslation(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serve(ctx, gateway, "translation");
}

// Problems with a valid configuration that do not stop `serve` but that the operator should see at
// start, before a request fails: a channel credential variable that is not set; a body idle
// timeout that can never apply because the whole-body timeout is shorter.
//
// An unset `api_key_env` is a warning, not an error: local servers (Ollama, vLLM, llama.cpp,
// LM Studio) take no credential, a channel may rotate several variables of which some are set,
// and one missing key should not keep every other channel from serving. The warning names the
// channel and the variable, so the first failing request is no surprise.
import type { Config } from "./schema.ts";

/** One line per problem, each naming the field path, the channel and the fix. */
export function configWarnings(config: Config, env: Readonly<Record<string, string | undefined>>): string[] {
  const warnings: string[] = [];
  const { body_idle_timeout_seconds: idle, body_timeout_seconds: total } = config.server;
  if (idle >= total) {
    warnings.push(
      `server.body_idle_timeout_seconds (${idle}) is not shorter than server.body_timeout_seconds (${total}): a stalled body is cut by the total limit only; set the idle timeout below ${total}`,
    );
  }
  for (const [i, channel] of config.channels.entries()) {
    if (channel.kind === "sim") continue;
    const named = [
      ...(channel.api_key_env === undefined ? [] : [["api_key_env", channel.api_key_env] as const]),
      ...channel.api_key_envs.map((name, j) => [`api_key_envs[${j}]`, name] as const),
    ];
    for (const [field, variable] of named) {
      if (env[variable]) continue;
      warnings.push(
        `channels[${i}].${field}: the environment variable ${variable} of channel "${channel.name}" is not set (or empty); its calls go without that credential until you export ${variable} and restart`,
      );
    }
  }
  return warnings;
}

// `modelgate tui`: the operator's terminal UI (admin-tui/), connected to a gateway's admin API
// by --url/--token or MODELGATE_ADMIN_URL/MODELGATE_ADMIN_TOKEN.
import * as v from "valibot";
import { parse } from "./flags.ts";
import { UsageError } from "./usage-error.ts";

export const USAGE = `usage: modelgate tui [--url URL] [--token TOKEN]
  --url    the gateway, e.g. http://127.0.0.1:8080 (or MODELGATE_ADMIN_URL; default http://127.0.0.1:8080)
  --token  an admin token mga-... (or MODELGATE_ADMIN_TOKEN); \`modelgate admin token create\` mints one`;

const FLAGS = { url: { type: "string" }, token: { type: "string" } } as const;

const Target = v.object({
  url: v.pipe(
    v.string(),
    v.url("expected a URL such as http://127.0.0.1:8080"),
    v.regex(/^https?:\/\//i, "expected an http(s) URL"),
  ),
  token: v.pipe(v.string(), v.minLength(1, "an admin token is required")),
});

export async function tuiCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, FLAGS, "tui");
  if (positionals.length > 0) throw new UsageError(USAGE);
  const target = v.safeParse(Target, {
    url: values.url ?? process.env.MODELGATE_ADMIN_URL ?? "http://127.0.0.1:8080",
    token: values.token ?? process.env.MODELGATE_ADMIN_TOKEN ?? "",
  });
  if (!target.success) {
    const issue = target.issues[0];
    throw new UsageError(`tui: ${issue?.path?.[0]?.key ?? "input"}: ${issue?.message}\n\n${USAGE}`);
  }
  if (!process.stdin.isTTY) throw new UsageError("tui: needs an interactive terminal (stdin is not a TTY)");
  // Loaded only for this command, so other commands do not pay for React and Ink at start.
  const { runTui } = await import("../../admin-tui/main.tsx");
  await runTui(target.output.url, target.output.token);
}

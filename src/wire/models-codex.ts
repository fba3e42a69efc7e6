// The model catalog in the form the Codex CLI reads (`GET {model_catalog_url}?client_version=…`,
// answered `{"models": [ModelInfo…]}`; openai/codex `codex-rs/protocol/src/openai_models.rs`).
// Codex asks for it only with `[features] api_key_model_discovery = true` and a provider
// `model_catalog_url`; without an entry for the configured model it warns "Model metadata for … not
// found. Defaulting to fallback metadata" on every run. Each entry carries the fields Codex 0.169
// requires to accept the catalog (a missing one makes it drop the whole catalog), our own context
// sizes and reasoning efforts, and the tool choices Codex's fallback makes: measured with Codex
// 0.169, the tools it offers are the same with and without the catalog.
import type { ModelInfo } from "../catalog/models.ts";

/**
 * Codex refuses an entry with neither `base_instructions` nor an instruction template, and sends
 * it as the first (developer) message of every request, in place of its built-in prompt (measured:
 * a 17,330-character message without the catalog, this text with it). Codex's own prompt is
 * OpenAI's text, so this one is ours; a Codex user who prefers Codex's prompt sets
 * `model_instructions_file`, which wins over the catalog (measured too).
 */
export const CODEX_INSTRUCTIONS = [
  "You are a coding agent working in the user's workspace through the Codex CLI.",
  "Use the tools you are given to read files, run commands and make the changes the task needs;",
  "check your work by running it when you can, and never report the output of a command you did not run.",
  "Keep changes small and focused on the request, follow the conventions of the code around them,",
  "and end with a short account of what you changed, how you checked it, and anything left to do.",
].join(" ");

/** Reasoning efforts the Responses models take: low, medium, high, xhigh. */
const EFFORTS = [
  { effort: "low", description: "Quick answers with light reasoning" },
  { effort: "medium", description: "Balanced reasoning for everyday work" },
  { effort: "high", description: "Deeper reasoning for harder problems" },
  { effort: "xhigh", description: "The most reasoning the model offers" },
] as const;

export interface CodexModel {
  slug: string;
  display_name: string;
  description: string | null;
  default_reasoning_level?: string;
  supported_reasoning_levels: readonly { effort: string; description: string }[];
  shell_type: "shell_command";
  visibility: "list";
  supported_in_api: true;
  priority: number;
  availability_nux: null;
  upgrade: null;
  base_instructions: string;
  supports_reasoning_summaries: boolean;
  support_verbosity: false;
  default_verbosity: null;
  apply_patch_tool_type: null;
  truncation_policy: { mode: "bytes"; limit: number };
  supports_parallel_tool_calls: false;
  context_window: number;
  max_context_window: number;
  experimental_supported_tools: string[];
  input_modalities: ("text" | "image")[];
}

/** One Codex entry; reasoning levels only for the Responses family (the Messages family thinks by budget). */
export function codexModel(model: ModelInfo, priority: number): CodexModel {
  const reasons = model.family === "text";
  return {
    slug: model.id,
    display_name: model.displayName,
    description: `${model.displayName} through modelgate`,
    ...(reasons ? { default_reasoning_level: "medium" } : {}),
    supported_reasoning_levels: reasons ? EFFORTS : [],
    shell_type: "shell_command",
    visibility: "list",
    supported_in_api: true,
    priority,
    availability_nux: null,
    upgrade: null,
    base_instructions: CODEX_INSTRUCTIONS,
    supports_reasoning_summaries: false,
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: null,
    truncation_policy: { mode: "bytes", limit: 10_000 },
    supports_parallel_tool_calls: false,
    context_window: model.contextTokens,
    max_context_window: model.contextTokens,
    experimental_supported_tools: [],
    input_modalities: ["text", "image"],
  };
}

/** The catalog Codex reads: the text and messages models given (image models cannot run Codex). */
export function codexModelList(models: readonly ModelInfo[]): { models: CodexModel[] } {
  const usable = models.filter((m) => m.family === "text" || m.family === "messages");
  return { models: usable.map((m, i) => codexModel(m, i + 1)) };
}

// Model list bodies: the OpenAI list shape, and the Anthropic one for clients that send a version header.
import type { ModelInfo } from "../catalog/models.ts";

export interface OpenAIModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

export function openaiModel(model: ModelInfo): OpenAIModel {
  return { id: model.id, object: "model", created: model.created, owned_by: model.ownedBy };
}

export function openaiModelList(models: readonly ModelInfo[]): { object: "list"; data: OpenAIModel[] } {
  return { object: "list", data: models.map(openaiModel) };
}

export interface AnthropicModel {
  type: "model";
  id: string;
  display_name: string;
  created_at: string;
  max_input_tokens?: number;
  max_tokens?: number;
}

export function anthropicModel(model: ModelInfo): AnthropicModel {
  const entry: AnthropicModel = {
    type: "model",
    id: model.id,
    display_name: model.displayName,
    created_at: new Date(model.created * 1000).toISOString().replace(".000Z", "Z"),
  };
  if (model.contextTokens > 0) {
    entry.max_input_tokens = model.contextTokens;
    entry.max_tokens = model.maxOutputTokens;
  }
  return entry;
}

export interface AnthropicPage {
  limit: number;
  afterId?: string | undefined;
  beforeId?: string | undefined;
}

/** One page of the Anthropic list: `{data, has_more, first_id, last_id}` with after_id/before_id cursors. */
export function anthropicModelList(
  models: readonly ModelInfo[],
  page: AnthropicPage,
): { data: AnthropicModel[]; has_more: boolean; first_id: string | null; last_id: string | null } {
  let start = 0;
  let end = models.length;
  if (page.afterId !== undefined) start = models.findIndex((m) => m.id === page.afterId) + 1;
  if (page.beforeId !== undefined) {
    const before = models.findIndex((m) => m.id === page.beforeId);
    end = before < 0 ? models.length : before;
    start = Math.max(start, end - page.limit);
  }
  const slice = models.slice(start, Math.min(end, start + page.limit));
  const hasMore = page.beforeId !== undefined ? start > 0 : start + slice.length < end;
  return {
    data: slice.map(anthropicModel),
    has_more: hasMore,
    first_id: slice[0]?.id ?? null,
    last_id: slice.at(-1)?.id ?? null,
  };
}

// The model stage's first check, shared by every endpoint that names a model: the id must be in
// the catalog (else 400 model not found) and allowed by the key's group (else 403; the group's
// allow list is src/catalog/groups.ts). Here rather than in src/auth/, so a request's walk enters
// auth/ once, to authenticate.
import type { Principal } from "../auth/keys.ts";
import type { AliasTable } from "../catalog/aliases.ts";
import { type Family, findModel, type ModelInfo, modelNotFoundMessage } from "../catalog/models.ts";
import { endpointOf } from "../endpoints/index.ts";
import { GatewayError } from "../wire/errors.ts";

/**
 * The catalog model `id` names for this key — itself, or the target of an alias the key's group
 * sees (src/catalog/aliases.ts) — checked as above.
 */
export function requireModel(
  principal: Principal,
  id: string,
  aliases: AliasTable,
  notFound: "invalid_request" | "not_found" = "invalid_request",
): ModelInfo {
  const model = findModel(id) ?? aliases.resolve(principal.group, id);
  if (!model) {
    throw new GatewayError(
      notFound === "not_found" ? "not_found" : "model_not_found",
      modelNotFoundMessage(id),
      {
        code: "model_not_found",
        param: "model",
      },
    );
  }
  if (!principal.models.allows(model.id)) {
    throw new GatewayError(
      "model_not_allowed",
      `Your API key's group "${principal.group}" is not allowed to use the model \`${model.id}\`${model.id === id ? "" : ` (the alias \`${id}\` names it)`}. GET /v1/models lists the models it may use; ask the operator to add this one to the group.`,
      { param: "model" },
    );
  }
  return model;
}

/**
 * The model when its family is one `endpoint` serves; otherwise a 400 naming the endpoints that
 * serve it (an embedding model sent to chat, a text model sent to embeddings, …).
 */
export function requireFamily(model: ModelInfo, families: readonly Family[], endpoint: string): ModelInfo {
  if (families.includes(model.family)) return model;
  throw new GatewayError(
    "invalid_request",
    `The model \`${model.id}\` is ${endpointOf(model.family).modelNoun} and is not served on POST ${endpoint}: call ${endpointOf(model.family).servedOn}.`,
    { param: "model" },
  );
}

// The simulator's text endpoints (/v1/responses, /v1/chat/completions, /v1/messages): decode the
// request like the real API, plan a deterministic answer, and render it in the protocol's JSON or
// paced SSE. Used over HTTP (`modelgate sim`) and in-process by the `sim` channel kind.
// Test directives (errors, drops, timing) are described in directives.ts; the tool-call rule in plan.ts.
import { countPromptTokens } from "../../catalog/token-thread.ts";
import { decodeChatRequest } from "../../wire/chat.ts";
import { GatewayError } from "../../wire/errors.ts";
import { decodeMessagesRequest } from "../../wire/messages.ts";
import { decodeResponsesRequest } from "../../wire/responses.ts";
import { SSE_HEADERS } from "../../wire/sse.ts";
import type { TextProtocol, TextView } from "../../wire/text-form.ts";
import { viewOfChat, viewOfMessages, viewOfResponses } from "../../wire/translate/index.ts";
import type { SimRoute } from "../routes.ts";
import { chatCompletion, chatEvents } from "./chat.ts";
import { simError } from "./errors.ts";
import { messageObject, messagesEvents } from "./messages.ts";
import { brokenBody, pacedStream, type SimEvent, type Timing } from "./pace.ts";
import { planAnswer, type SimPlan } from "./plan.ts";
import { responseObject, responsesEvents } from "./responses.ts";

export interface SimTextOptions {
  seed: number;
  /** Defaults for requests without `sim:ttft` / `sim:tps` directives. */
  timing?: Timing | undefined;
  /** Default for requests without a `sim:drop` directive (a fault profile's disconnect_after_events). */
  dropAfter?: number | undefined;
}

interface Rendered {
  view: TextView;
  json(plan: SimPlan): unknown;
  events(plan: SimPlan): SimEvent[];
}

function render(protocol: TextProtocol, body: unknown, headers: Headers): Rendered {
  const now = Math.floor(Date.now() / 1000);
  switch (protocol) {
    case "responses": {
      const req = decodeResponsesRequest(body);
      return {
        view: viewOfResponses(req),
        json: (plan) => responseObject(req, plan, now, true),
        events: (plan) => responsesEvents(req, plan, now),
      };
    }
    case "chat": {
      const req = decodeChatRequest(body);
      return {
        view: viewOfChat(req),
        json: (plan) => chatCompletion(req, plan, now),
        events: (plan) => chatEvents(req, plan, now),
      };
    }
    case "messages": {
      const req = decodeMessagesRequest(body, headers.get("anthropic-beta"));
      return {
        view: viewOfMessages(req),
        json: (plan) => messageObject(req, plan),
        events: (plan) => messagesEvents(req, plan),
      };
    }
    default: {
      const never: never = protocol;
      throw new Error(`unknown protocol ${String(never)}`);
    }
  }
}

/** Answers one simulated text request in `protocol`. */
export async function simTextAnswer(
  protocol: TextProtocol,
  request: Request,
  options: SimTextOptions,
): Promise<Response> {
  let rendered: Rendered;
  try {
    rendered = render(protocol, JSON.parse(await request.text()), request.headers);
  } catch (thrown) {
    const message =
      thrown instanceof GatewayError ? thrown.message : `malformed JSON body: ${String(thrown)}`;
    const status = thrown instanceof GatewayError ? thrown.status : 400;
    return simError(protocol, status, `simulator: ${message}`);
  }
  const plan = planAnswer(rendered.view, options.seed, await countPromptTokens(rendered.view.promptText));
  const d = plan.directives;
  if (d.errorStatus !== undefined) {
    return simError(protocol, d.errorStatus, `simulator: error ${d.errorStatus} requested by sim:error`);
  }
  const dropAfter = d.dropAfter ?? options.dropAfter;
  const timing: Timing = {
    ttftMs: d.ttftMs ?? options.timing?.ttftMs ?? 0,
    tokensPerSecond: d.tokensPerSecond ?? options.timing?.tokensPerSecond ?? 0,
  };
  if (!rendered.view.stream) {
    const json = JSON.stringify(rendered.json(plan));
    if (timing.ttftMs > 0) await Bun.sleep(timing.ttftMs);
    const body = dropAfter === undefined ? json : brokenBody(json);
    return new Response(body, { headers: { "content-type": "application/json" } });
  }
  return new Response(pacedStream(rendered.events(plan), timing, dropAfter), { headers: SSE_HEADERS });
}

/** The simulator HTTP routes for the three text endpoints. */
export const SIM_TEXT_ROUTES: readonly SimRoute[] = [
  { method: "POST", path: "/v1/responses", handle: (r, o) => simTextAnswer("responses", r, o) },
  { method: "POST", path: "/v1/chat/completions", handle: (r, o) => simTextAnswer("chat", r, o) },
  { method: "POST", path: "/v1/messages", handle: (r, o) => simTextAnswer("messages", r, o) },
];

// The event that ends a broken stream in each protocol, so the client sees an error and never a
// made-up normal finish: Responses `error` + `response.failed`, Chat a `data: {"error":…}` line,
// Messages `event: error`.
import { sseJson } from "../../wire/sse.ts";
import type { StreamTap } from "./tap.ts";

/** The bytes that terminate a stream whose upstream broke off with `message`. */
export function failureEvents(tap: StreamTap, message: string): Uint8Array[] {
  switch (tap.protocol) {
    case "responses": {
      const seq = tap.events;
      const out = [
        sseJson("error", {
          type: "error",
          code: "upstream_failed",
          message,
          param: null,
          sequence_number: seq,
        }),
      ];
      if (tap.created) {
        const response = { ...tap.created, status: "failed", error: { code: "server_error", message } };
        out.push(sseJson("response.failed", { type: "response.failed", sequence_number: seq + 1, response }));
      }
      return out;
    }
    case "chat":
      return [
        sseJson(undefined, {
          error: { message, type: "server_error", param: null, code: "upstream_failed" },
        }),
      ];
    case "messages":
      return [sseJson("error", { type: "error", error: { type: "api_error", message } })];
  }
}

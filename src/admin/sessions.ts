// Open admin event feeds and the token each was opened with. A feed lives no longer than its
// token: revoking it through this process's admin API closes its feeds at once; revoked elsewhere
// (the CLI, another node), its feeds are closed within SESSION_CHECK_MS, the tokens of open feeds
// being looked up in the store again while any is open.
import { hashSecret } from "../auth/secret.ts";
import { log } from "../base/log.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { presentedAdminToken } from "./tokens.ts";

/** How often the tokens of open feeds are looked up again. */
export const SESSION_CHECK_MS = 1000;

interface Session {
  tokenHash: string;
  requestId: string;
  gateway: Gateway;
  /** Ends the feed (a final event, then the end of the stream). */
  close: () => void;
}

const open = new Set<Session>();
let timer: ReturnType<typeof setInterval> | undefined;

/** Holds a feed open under the token its request presented; returns the function that lets it go. */
export function holdSession(gateway: Gateway, ctx: RequestContext, close: () => void): () => void {
  const session: Session = {
    tokenHash: hashSecret(presentedAdminToken(ctx.request.headers) ?? ""),
    requestId: ctx.requestId,
    gateway,
    close,
  };
  open.add(session);
  timer ??= setInterval(() => void closeRevoked().catch(logFailure), SESSION_CHECK_MS);
  timer.unref();
  return () => {
    open.delete(session);
    if (open.size > 0 || timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
  };
}

/** Closes every open feed whose token no longer authenticates (revoked, or gone from the store). */
export async function closeRevoked(): Promise<void> {
  const checked = new Map<string, boolean>();
  for (const session of [...open]) {
    let valid = checked.get(session.tokenHash);
    if (valid === undefined) {
      valid = (await session.gateway.store.admin.findAdminToken(session.tokenHash)) !== undefined;
      checked.set(session.tokenHash, valid);
    }
    if (valid || !open.has(session)) continue;
    open.delete(session);
    log("info", "admin event feed closed: its token was revoked", { request_id: session.requestId });
    session.close();
  }
}

function logFailure(error: unknown): void {
  log("warn", "checking the tokens of open admin feeds failed", {
    error: error instanceof Error ? error.message : String(error),
  });
}

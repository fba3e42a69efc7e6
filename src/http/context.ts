// The per-request context built at the edge: request id, client address, start time, protocol.
import { type CidrList, clientAddress, type parseAddress } from "../auth/ip.ts";
import type { ErrorProtocol } from "../wire/errors.ts";

export type Address = NonNullable<ReturnType<typeof parseAddress>>;

export interface RequestContext {
  request: Request;
  requestId: string;
  /** The client address after the trusted-proxy rule; undefined only if the socket gave none. */
  client: Address | undefined;
  startedAt: number;
  /** Which error shape this route answers with. */
  protocol: ErrorProtocol;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Keeps a sane client-sent `x-request-id`, otherwise makes one. */
export function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id");
  if (given && REQUEST_ID.test(given)) return given;
  return `req_${crypto.randomUUID().replaceAll("-", "")}`;
}

export function buildContext(
  request: Request,
  peer: string | undefined,
  trusted: CidrList,
  protocol: ErrorProtocol,
): RequestContext {
  return {
    request,
    requestId: requestIdOf(request),
    client:
      peer === undefined ? undefined : clientAddress(peer, request.headers.get("x-forwarded-for"), trusted),
    startedAt: performance.now(),
    protocol,
  };
}

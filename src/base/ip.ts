// Client addresses and CIDR allowlists (IPv4 and IPv6), on ipaddr.js.
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Range = [Address, number];

/**
 * Parses an address, folding IPv4-mapped IPv6 (`::ffff:1.2.3.4`) to IPv4; undefined if not an
 * address. IPv4 only in strict dotted decimal: the octal, hex and short forms inet_aton reads
 * (`012.1.2.3`, `0x7f.1`, `127.1`) name other addresses than they seem to, so they are refused.
 */
export function parseAddress(text: string): Address | undefined {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (ipaddr.IPv4.isValidFourPartDecimal(trimmed)) return ipaddr.IPv4.parse(trimmed);
  if (!ipaddr.IPv6.isValid(trimmed) || !strictEmbeddedIPv4(trimmed)) return undefined;
  return ipaddr.process(trimmed);
}

/** An IPv6 text's trailing dotted IPv4 part (`::ffff:1.2.3.4`), when it has one, in strict dotted decimal. */
function strictEmbeddedIPv4(text: string): boolean {
  if (!text.includes(".")) return true;
  const tail = text.slice(text.lastIndexOf(":") + 1).split("%")[0] ?? "";
  return ipaddr.IPv4.isValidFourPartDecimal(tail);
}

/** Checks one CIDR (or a bare address, meaning a single host); returns an error message if invalid. */
export function checkCidr(text: string): string | undefined {
  try {
    parseRange(text);
    return undefined;
  } catch {
    return `"${text}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, 203.0.113.7, 2001:db8::/32)`;
  }
}

function parseRange(text: string): Range {
  const trimmed = text.trim();
  if (trimmed.includes("/")) {
    const slash = trimmed.lastIndexOf("/");
    if (parseAddress(trimmed.slice(0, slash)) === undefined) throw new Error("not an address");
    const [address, bits] = ipaddr.parseCIDR(trimmed);
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
    }
    return [address, bits];
  }
  const address = parseAddress(trimmed);
  if (!address) throw new Error("not an address");
  return [address, address.kind() === "ipv4" ? 32 : 128];
}

/** A compiled list of CIDR ranges. */
export class CidrList {
  readonly #ranges: Range[];

  constructor(cidrs: readonly string[]) {
    this.#ranges = cidrs.map(parseRange);
  }

  get size(): number {
    return this.#ranges.length;
  }

  contains(address: Address | undefined): boolean {
    if (!address) return false;
    for (const [base, bits] of this.#ranges) {
      if (base.kind() === address.kind() && address.match(base, bits)) return true;
    }
    return false;
  }
}

// Socket peers repeat (keep-alive connections, the same clients): parsed once, kept in a small
// map that is simply emptied when full. Address objects are never mutated after parsing.
const PEER_CACHE_SIZE = 4096;
const peerCache = new Map<string, Address | undefined>();

function peerAddress(peer: string): Address | undefined {
  if (peerCache.has(peer)) return peerCache.get(peer);
  const address = parseAddress(peer);
  if (peerCache.size >= PEER_CACHE_SIZE) peerCache.clear();
  peerCache.set(peer, address);
  return address;
}

/** An `X-Forwarded-For` entry that is not an address, met before the client's: its text. */
export class UnparsableHop extends Error {
  constructor(readonly hop: string) {
    super(`X-Forwarded-For entry ${JSON.stringify(hop)} is not an IP address`);
  }
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy, in which case the
 * right-most `X-Forwarded-For` entry that is not itself a trusted proxy. An entry that is not an
 * address, met before that one, throws `UnparsableHop`: falling back to the peer would give the
 * proxy's own (trusted, often allowlisted) address to whoever wrote the entry.
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | null,
  trusted: CidrList,
): Address | undefined {
  const socket = peerAddress(peer);
  if (!forwardedFor || trusted.size === 0 || !trusted.contains(socket)) return socket;
  const hops = forwardedFor.split(",");
  for (let i = hops.length - 1; i >= 0; i--) {
    const text = hops[i] ?? "";
    const hop = parseAddress(text);
    if (!hop) throw new UnparsableHop(text.trim());
    if (!trusted.contains(hop)) return hop;
  }
  return socket;
}

import { describe, expect, test } from "bun:test";
import { CidrList, checkCidr, clientAddress, parseAddress, UnparsableHop } from "../../src/base/ip.ts";

describe("CIDR allowlists", () => {
  test("match IPv4 and IPv6 ranges, and single hosts", () => {
    const list = new CidrList(["10.0.0.0/8", "2001:db8::/32", "203.0.113.7"]);
    expect(list.contains(parseAddress("10.200.1.1"))).toBe(true);
    expect(list.contains(parseAddress("11.0.0.1"))).toBe(false);
    expect(list.contains(parseAddress("2001:db8:1::5"))).toBe(true);
    expect(list.contains(parseAddress("2001:db9::1"))).toBe(false);
    expect(list.contains(parseAddress("203.0.113.7"))).toBe(true);
    expect(list.contains(parseAddress("203.0.113.8"))).toBe(false);
  });

  test("IPv4-mapped IPv6 addresses match IPv4 ranges", () => {
    const list = new CidrList(["127.0.0.0/8"]);
    expect(list.contains(parseAddress("::ffff:127.0.0.1"))).toBe(true);
    expect(new CidrList(["::ffff:10.0.0.0/104"]).contains(parseAddress("10.9.9.9"))).toBe(true);
  });

  test("invalid ranges are explained", () => {
    expect(checkCidr("10.0.0.0/8")).toBeUndefined();
    expect(checkCidr("10.0.0.0/33")).toContain("not an IP address or CIDR range");
    expect(checkCidr("example.com")).toContain("not an IP address or CIDR range");
  });
});

describe("client address", () => {
  const trusted = new CidrList(["127.0.0.1/32", "10.0.0.0/8"]);

  test("X-Forwarded-For is ignored from an untrusted peer", () => {
    expect(clientAddress("192.0.2.5", "10.1.1.1", trusted)?.toString()).toBe("192.0.2.5");
    expect(clientAddress("127.0.0.1", "198.51.100.1", new CidrList([]))?.toString()).toBe("127.0.0.1");
  });

  test("from a trusted peer, the right-most untrusted hop is the client", () => {
    expect(clientAddress("127.0.0.1", "198.51.100.1", trusted)?.toString()).toBe("198.51.100.1");
    expect(clientAddress("127.0.0.1", "203.0.113.9, 198.51.100.1, 10.0.0.2", trusted)?.toString()).toBe(
      "198.51.100.1",
    );
    expect(clientAddress("127.0.0.1", "10.0.0.3", trusted)?.toString()).toBe("127.0.0.1");
  });

  test("an unparsable hop before the client's is thrown, never the proxy's address", () => {
    expect(() => clientAddress("127.0.0.1", "not-an-ip", trusted)).toThrow(UnparsableHop);
    expect(() => clientAddress("127.0.0.1", "9.9.9.9, garbage", trusted)).toThrow(UnparsableHop);
    expect(() => clientAddress("127.0.0.1", "012.1.2.3", trusted)).toThrow(UnparsableHop);
    // Left of the client's entry, nothing is read.
    expect(clientAddress("127.0.0.1", "garbage, 9.9.9.9", trusted)?.toString()).toBe("9.9.9.9");
  });
});

describe("strict address forms", () => {
  test("only dotted-decimal IPv4 and IPv6 parse", () => {
    for (const text of ["012.1.2.3", "0x7f.0.0.1", "127.1", "1.2.3.04", "2130706433", "::ffff:012.1.2.3", ""])
      expect({ text, parsed: parseAddress(text) }).toEqual({ text, parsed: undefined });
    for (const text of ["9.9.9.9", "0.0.0.0", "::1", "2001:db8::1", "[2001:db8::1]"])
      expect({ text, parsed: parseAddress(text) !== undefined }).toEqual({ text, parsed: true });
    expect(parseAddress("::ffff:10.1.2.3")?.toString()).toBe("10.1.2.3");
  });

  test("CIDRs take the same forms", () => {
    expect(checkCidr("012.0.0.0/8")).toContain("not an IP address or CIDR range");
    expect(checkCidr("10.0.0.0/8")).toBeUndefined();
    expect(checkCidr("2001:db8::/32")).toBeUndefined();
  });
});

import { BlockList, isIP } from "node:net";

/** A list of addresses and CIDR ranges (`10.0.0.0/8`, `::1`, `fd7a::/48`). */
export function addressList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", bits] = entry.split("/");
    const family = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/** Whether `entry` is an address or CIDR range `addressList` takes. */
export function isAddressEntry(entry: string): boolean {
  const [address = "", bits, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  return /^\d+$/.test(bits) && n <= (family === 4 ? 32 : 128);
}

/** `::ffff:1.2.3.4` is 1.2.3.4. */
export function plainAddress(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export function contains(list: BlockList, address: string): boolean {
  const plain = plainAddress(address);
  const family = isIP(plain);
  return family !== 0 && list.check(plain, family === 6 ? "ipv6" : "ipv4");
}

/**
 * The client's address: the socket's peer, and — only while that hop is one
 * of the trusted proxies — the next `X-Forwarded-For` entry from the right
 * (contract §1.1). Entries a client wrote itself sit further left and are
 * never reached past an untrusted hop.
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: BlockList,
): string | undefined {
  let current = peer === undefined ? undefined : plainAddress(peer);
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : (forwardedFor ?? ""))
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  while (current !== undefined && contains(trusted, current) && hops.length > 0) {
    const next = plainAddress(hops.pop()!);
    if (isIP(next) === 0) break;
    current = next;
  }
  return current;
}

/** Loopback: 127.0.0.0/8 and ::1. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const plain = plainAddress(address);
  return plain === "::1" || (isIP(plain) === 4 && plain.startsWith("127."));
}

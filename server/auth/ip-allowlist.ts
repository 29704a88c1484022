import { BlockList, isIP } from 'node:net';

/** Strips the IPv4-mapped IPv6 form (`::ffff:10.0.0.1`) and zone ids so lists match what people write. */
export function normalizeAddress(address: string): string {
  let value = address.trim();
  const zone = value.indexOf('%');
  if (zone !== -1) value = value.slice(0, zone);
  if (value.toLowerCase().startsWith('::ffff:') && isIP(value.slice(7)) === 4) return value.slice(7);
  return value;
}

/** Validates an allowlist entry: an IPv4/IPv6 address or a CIDR range. Returns an error text or null. */
export function validateAllowlistEntry(entry: string): string | null {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || !address) return `"${entry}" is not an address or CIDR range`;
  const family = isIP(address);
  if (family === 0) return `"${entry}" is not an IPv4 or IPv6 address`;
  if (prefix !== undefined) {
    const bits = Number(prefix);
    const max = family === 4 ? 32 : 128;
    if (!/^\d+$/.test(prefix) || bits < 0 || bits > max) return `"${entry}" has an invalid prefix length`;
  }
  return null;
}

/** A compiled allowlist; an empty list accepts every address (SPEC "Authentication" 5). */
export class IpAllowlist {
  private readonly blockList = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    this.empty = entries.length === 0;
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const normalized = normalizeAddress(address!);
      const type = isIP(normalized) === 6 ? 'ipv6' : 'ipv4';
      // An IPv4-mapped IPv6 range (::ffff:10.0.0.0/104) is the IPv4 range it maps: clients are matched in IPv4 form.
      const mapped = normalized !== address && type === 'ipv4';
      let bits = prefix === undefined ? undefined : Number(prefix);
      if (mapped && bits !== undefined) bits = Math.max(0, bits - 96);
      try {
        if (bits === undefined) this.blockList.addAddress(normalized, type);
        else this.blockList.addSubnet(normalized, bits, type);
      } catch {
        // Entries are validated when they are set; one that still cannot be compiled matches nothing.
      }
    }
  }

  allows(address: string): boolean {
    if (this.empty) return true;
    const normalized = normalizeAddress(address);
    const family = isIP(normalized);
    if (family === 0) return false;
    try {
      return this.blockList.check(normalized, family === 6 ? 'ipv6' : 'ipv4');
    } catch {
      return false;
    }
  }
}

/**
 * The client address: the socket's, unless the socket is a trusted proxy, in
 * which case X-Forwarded-For is read from the right, skipping trusted hops.
 * X-Forwarded-For is never believed from an untrusted peer (GAPS.md "Keys").
 */
export function resolveClientAddress(socketAddress: string, forwardedFor: string | undefined, trusted: IpAllowlist | null): string {
  const peer = normalizeAddress(socketAddress || '');
  if (!trusted || trusted.empty || !forwardedFor || !trusted.allows(peer)) return peer;
  const hops = forwardedFor.split(',').map((hop) => normalizeAddress(hop));
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = hops[index]!;
    if (isIP(hop) === 0) return peer;
    if (!trusted.allows(hop)) return hop;
  }
  return hops[0] ?? peer;
}

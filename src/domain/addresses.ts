import { BlockList, isIP } from 'node:net';

/** Addresses of this machine only: `localhost`, 127.0.0.0/8 (also written IPv4-mapped, `::ffff:127.0.0.1`) and `::1`. */
export function isLoopback(host: string): boolean {
  const plain = host.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return plain === 'localhost' || plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

/** The loopback ranges, as CIDR: what `--mqtt-proxy-trust` trusts by default. */
export const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];

/**
 * Whether an address lies in one of `ranges` (addresses or CIDR ranges, IPv4 or IPv6, already
 * checked); an IPv4 address written IPv4-mapped (`::ffff:10.0.0.1`) counts as that IPv4 address.
 */
export function addressMatcher(ranges: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const range of ranges) {
    const [address = '', bits] = range.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return (address: string) => {
    const plain = address.toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}

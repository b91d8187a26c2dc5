/**
 * HAProxy's PROXY protocol, version 2 (the binary header `send-proxy-v2` writes before the client's
 * first byte): which client a balancer in TCP mode connected on behalf of. Spec:
 * https://www.haproxy.org/download/2.6/doc/proxy-protocol.txt, section 2.2. Pure: the listener
 * (`--mqtt-proxy-protocol`) feeds `parseProxyHeader` the bytes so far and hands the rest to TLS.
 */

/** The 12-byte signature that starts every v2 header. */
export const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

/** Fixed part: signature, version/command, family/protocol, length of the addresses. */
const FIXED_BYTES = 16;
/** No balancer sends more than this (addresses plus TLVs); a longer header is refused, not buffered. */
export const MAX_PROXY_HEADER_BYTES = 16 + 536;

export type ProxyHeader =
  /** More bytes are needed before anything can be said. */
  | { kind: 'incomplete' }
  /** The balancer speaks for a client: its address and port. */
  | { kind: 'proxied'; address: string; port: number; headerBytes: number }
  /** LOCAL: the balancer's own connection (a health check); the peer is the balancer itself. */
  | { kind: 'local'; headerBytes: number }
  /** Not a PROXY v2 header, or a malformed one: the connection is closed. */
  | { kind: 'refused'; reason: string };

function ipv6(bytes: Buffer, offset: number): string {
  const groups: string[] = [];
  for (let i = 0; i < 8; i++) groups.push(bytes.readUInt16BE(offset + 2 * i).toString(16));
  const text = groups.join(':');
  // The canonical short form (RFC 5952): the longest run of two or more zero groups becomes "::".
  const runs = [...text.matchAll(/(?:^|:)0(?::0)+(?::|$)/g)];
  if (runs.length === 0) return text;
  const longest = runs.reduce((a, b) => (b[0].length > a[0].length ? b : a));
  return `${text.slice(0, longest.index)}::${text.slice(longest.index! + longest[0].length)}`;
}

/** Reads a v2 header from the start of `bytes` (all bytes received so far on the connection). */
export function parseProxyHeader(bytes: Buffer): ProxyHeader {
  const signed = Math.min(bytes.length, PROXY_V2_SIGNATURE.length);
  if (!bytes.subarray(0, signed).equals(PROXY_V2_SIGNATURE.subarray(0, signed))) {
    return { kind: 'refused', reason: 'the connection does not start with a PROXY protocol v2 header' };
  }
  if (bytes.length < FIXED_BYTES) return { kind: 'incomplete' };
  const versionCommand = bytes[12]!;
  if (versionCommand >> 4 !== 2) return { kind: 'refused', reason: `PROXY protocol version ${versionCommand >> 4} is not 2` };
  const command = versionCommand & 0x0f;
  if (command > 1) return { kind: 'refused', reason: `PROXY protocol command ${command} is neither LOCAL nor PROXY` };
  const length = bytes.readUInt16BE(14);
  const headerBytes = FIXED_BYTES + length;
  if (headerBytes > MAX_PROXY_HEADER_BYTES) return { kind: 'refused', reason: `a PROXY protocol header of ${headerBytes} bytes is too long` };
  if (bytes.length < headerBytes) return { kind: 'incomplete' };
  if (command === 0) return { kind: 'local', headerBytes };
  const familyProtocol = bytes[13]!;
  // 0x11 TCP over IPv4, 0x21 TCP over IPv6: the only ones a TCP balancer in front of MQTT sends.
  if (familyProtocol === 0x11 && length >= 12) {
    return { kind: 'proxied', address: [...bytes.subarray(16, 20)].join('.'), port: bytes.readUInt16BE(24), headerBytes };
  }
  if (familyProtocol === 0x21 && length >= 36) {
    return { kind: 'proxied', address: ipv6(bytes, 16), port: bytes.readUInt16BE(48), headerBytes };
  }
  return { kind: 'refused', reason: `PROXY protocol address family/protocol 0x${familyProtocol.toString(16).padStart(2, '0')} with ${length} bytes is not TCP over IPv4 or IPv6` };
}

/**
 * The little DER (ITU-T X.690) that src/pki writes and reads: certificates (RFC 5280), PKCS#12
 * files (RFC 7292) and certificate requests (PKCS#10, RFC 2986). node:crypto signs, hashes and
 * encrypts natively but builds none of these structures: this is the part in JavaScript.
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One element: tag, definite length, the contents concatenated. */
export function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = contents.length === 1 ? contents[0]! : Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);

/** SET OF, its elements in the order DER requires (by their encodings). */
export const set = (...items: Buffer[]): Buffer => tlv(0x31, ...[...items].sort(Buffer.compare));

/** [n] EXPLICIT around one element, or [n] IMPLICIT of a constructed one (same tag byte). */
export const context = (n: number, ...contents: Buffer[]): Buffer => tlv(0xa0 | n, ...contents);

export const nullValue = (): Buffer => Buffer.from([0x05, 0x00]);
export const boolean = (value: boolean): Buffer => Buffer.from([0x01, 0x01, value ? 0xff : 0x00]);
export const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
/** A BIT STRING of whole bytes. */
export const bitString = (bytes: Buffer): Buffer => tlv(0x03, Buffer.from([0]), bytes);
export const utf8String = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
/** BMPString: UTF-16, big-endian (PKCS#12 friendlyName). */
export const bmpString = (text: string): Buffer => tlv(0x1e, Buffer.from(text, 'utf16le').swap16());

/** A non-negative INTEGER from a number or from unsigned big-endian bytes. */
export function integer(value: number | Buffer): Buffer {
  const hex = typeof value === 'number' ? value.toString(16) : '';
  let bytes = typeof value === 'number' ? Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex') : value;
  let first = 0;
  while (first < bytes.length - 1 && bytes[first] === 0) first++;
  bytes = bytes.subarray(first);
  // A set top bit would make it negative: a zero byte keeps it positive.
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const bytes: number[] = [];
  // The first two arcs make one subidentifier (X.690 8.19.4), base 128 like the others (2.999: two bytes).
  for (const arc of [40 * arcs[0]! + arcs[1]!, ...arcs.slice(2)]) {
    const base128 = [arc & 0x7f];
    for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) base128.unshift((rest & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), to the second. */
export function time(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(text.slice(2), 'ascii')) : tlv(0x18, Buffer.from(text, 'ascii'));
}

/** One element read back: its tag, the whole encoding and its contents. */
export interface Element {
  tag: number;
  encoded: Buffer;
  contents: Buffer;
}

/** The element at the start of `bytes`. Throws on a truncated or indefinite-length encoding. */
export function read(bytes: Buffer): Element {
  if (bytes.length < 2) throw new Error('DER: truncated element');
  const tag = bytes[0]!;
  let size = bytes[1]!;
  let header = 2;
  if (size & 0x80) {
    const count = size & 0x7f;
    if (count === 0 || count > 4 || bytes.length < 2 + count) throw new Error(`DER: unsupported length of ${count} bytes`);
    size = 0;
    for (let i = 0; i < count; i++) size = size * 256 + bytes[2 + i]!;
    header += count;
  }
  if (bytes.length < header + size) throw new Error('DER: element longer than its input');
  return { tag, encoded: bytes.subarray(0, header + size), contents: bytes.subarray(header, header + size) };
}

/** The dotted form of an OBJECT IDENTIFIER element (X.690 8.19), for what is compared and quoted. */
export function readOid(element: Element): string {
  if (element.tag !== 0x06 || element.contents.length === 0) throw new Error('DER: not an OBJECT IDENTIFIER');
  const arcs: number[] = [];
  let value = 0;
  for (const byte of element.contents) {
    value = value * 128 + (byte & 0x7f);
    if (byte & 0x80) continue;
    arcs.push(value);
    value = 0;
  }
  if (element.contents[element.contents.length - 1]! & 0x80) throw new Error('DER: truncated OBJECT IDENTIFIER');
  const first = arcs.shift()!;
  const top = Math.min(Math.floor(first / 40), 2);
  return [top, first - 40 * top, ...arcs].join('.');
}

/** The elements inside a constructed element, in order. */
export function children(element: Element): Element[] {
  const items: Element[] = [];
  for (let rest = element.contents; rest.length > 0; ) {
    const item = read(rest);
    items.push(item);
    rest = rest.subarray(item.encoded.length);
  }
  return items;
}

/** The DER of the first PEM block labelled `label`, or undefined when there is none. */
export function fromPem(text: string, label: string): Buffer | undefined {
  const match = new RegExp(`-----BEGIN ${label}-----([A-Za-z0-9+/=\\s]+)-----END ${label}-----`).exec(text);
  return match ? Buffer.from(match[1]!.replace(/\s+/g, ''), 'base64') : undefined;
}

/** DER to PEM with the given label, 64 characters a line. */
export function pem(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '')}\n-----END ${label}-----\n`;
}

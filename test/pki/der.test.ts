import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import * as der from '../../src/pki/der.js';
import { ipAddressBytes } from '../../src/pki/x509.js';

const hex = (bytes: Buffer) => bytes.toString('hex');

/** OpenSSL's reading of a DER encoding (`openssl asn1parse -inform DER`), the judge of what we write. */
function asn1parse(encoded: Buffer): string {
  return execFileSync('openssl', ['asn1parse', '-inform', 'DER'], { input: encoded, encoding: 'utf8' });
}

describe('DER writer', () => {
  it.each([
    [0, '020100'],
    [3, '020103'],
    [127, '02017f'],
    [128, '02020080'],
    [2048, '02020800'],
    [65536, '0203010000'],
  ])('writes INTEGER %d as %s', (value, encoded) => {
    expect(hex(der.integer(value))).toBe(encoded);
  });

  it('writes an INTEGER of bytes positive and minimal: leading zeros dropped, a zero byte before a set top bit', () => {
    expect(hex(der.integer(Buffer.from('ff00', 'hex')))).toBe('020300ff00');
    expect(hex(der.integer(Buffer.from('00007f', 'hex')))).toBe('02017f');
    expect(hex(der.integer(Buffer.from('0000', 'hex')))).toBe('020100');
  });

  it.each([
    ['2.5.4.3', '0603550403'],
    ['1.2.840.113549.1.1.11', '06092a864886f70d01010b'],
    ['2.16.840.1.101.3.4.1.42', '060960864801650304012a'],
    ['1.3.6.1.5.5.7.3.2', '06082b06010505070302'],
  ])('writes OID %s as %s', (dotted, encoded) => {
    expect(hex(der.oid(dotted))).toBe(encoded);
  });

  it('writes long lengths in the long form, one or two bytes', () => {
    expect(hex(der.octetString(Buffer.alloc(127)).subarray(0, 2))).toBe('047f');
    expect(hex(der.octetString(Buffer.alloc(128)).subarray(0, 3))).toBe('048180');
    expect(hex(der.octetString(Buffer.alloc(300)).subarray(0, 4))).toBe('0482012c');
    expect(der.octetString(Buffer.alloc(70_000)).subarray(0, 5)).toEqual(Buffer.from([0x04, 0x83, 0x01, 0x11, 0x70]));
  });

  it('writes UTCTime through 2049 and GeneralizedTime from 2050, to the second', () => {
    expect(der.time(new Date('2049-12-31T23:59:59.999Z')).toString('latin1')).toBe('\x17\x0d491231235959Z');
    expect(der.time(new Date('2050-01-01T00:00:00Z')).toString('latin1')).toBe('\x18\x0f20500101000000Z');
  });

  it('writes BMPString big-endian and orders a SET OF by encoding', () => {
    expect(hex(der.bmpString('gw-1'))).toBe('1e0800670077002d0031');
    expect(hex(der.set(der.integer(5), der.integer(1)))).toBe('3106020101020105');
  });

  it('writes what OpenSSL reads back as written', () => {
    const encoded = der.sequence(der.oid('2.5.4.3'), der.utf8String('scanhub'), der.boolean(true), der.nullValue(), der.context(0, der.integer(2)), der.bitString(Buffer.from([1])));
    const lines = asn1parse(encoded).split('\n').map((line) => line.replace(/^.*?:d=/, 'd=').replace(/\s+/g, ' ').trim());
    expect(lines.filter(Boolean)).toEqual([
      'd=0 hl=2 l= 28 cons: SEQUENCE',
      'd=1 hl=2 l= 3 prim: OBJECT :commonName',
      'd=1 hl=2 l= 7 prim: UTF8STRING :scanhub',
      'd=1 hl=2 l= 1 prim: BOOLEAN :255',
      'd=1 hl=2 l= 0 prim: NULL',
      'd=1 hl=2 l= 3 cons: cont [ 0 ]',
      'd=2 hl=2 l= 1 prim: INTEGER :02',
      'd=1 hl=2 l= 2 prim: BIT STRING',
    ]);
  });
});

describe('DER reader', () => {
  it('reads back elements and their children, short and long lengths alike', () => {
    const inner = [der.integer(1), der.octetString(Buffer.alloc(200, 9)), der.sequence()];
    const element = der.read(Buffer.concat([der.sequence(...inner), Buffer.from('trailing')]));
    expect(element.tag).toBe(0x30);
    expect(der.children(element).map((child) => child.encoded)).toEqual(inner);
    expect(der.children(element)[1]!.contents).toEqual(Buffer.alloc(200, 9));
  });

  it.each(['2.5.4.3', '1.2.840.113549.1.1.11', '1.2.840.10045.4.3.2', '1.3.101.112', '2.16.840.1.101.3.4.1.42', '2.999.3'])('reads OID %s as written', (dotted) => {
    expect(der.readOid(der.read(der.oid(dotted)))).toBe(dotted);
  });

  it('refuses an OID cut in the middle of an arc, and another element', () => {
    expect(() => der.readOid(der.read(Buffer.from('06022a86', 'hex')))).toThrow('DER: truncated OBJECT IDENTIFIER');
    expect(() => der.readOid(der.read(der.integer(3)))).toThrow('DER: not an OBJECT IDENTIFIER');
  });

  it('refuses a truncated element and an indefinite length', () => {
    expect(() => der.read(Buffer.from('3005020101', 'hex'))).toThrow('DER: element longer than its input');
    expect(() => der.read(Buffer.from('3080', 'hex'))).toThrow('DER: unsupported length of 0 bytes');
    expect(() => der.read(Buffer.from('30', 'hex'))).toThrow('DER: truncated element');
  });
});

describe('IP addresses of subject alternative names', () => {
  it.each([
    ['127.0.0.1', '7f000001'],
    ['::1', '00000000000000000000000000000001'],
    ['fd00::8:1', 'fd000000000000000000000000080001'],
    ['2001:db8:0:0:1:0:0:1', '20010db8000000000001000000000001'],
    ['::ffff:10.1.2.3', '00000000000000000000ffff0a010203'],
    ['fe80::', 'fe800000000000000000000000000000'],
  ])('%s is %s', (address, bytes) => {
    expect(hex(ipAddressBytes(address))).toBe(bytes);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROXY_V2_SIGNATURE, parseProxyHeader } from '../../src/mqtt/proxy-protocol.js';
import { freePort } from '../helpers/serve-process.js';

/** A v2 header as a balancer writes it. */
function header(command: number, familyProtocol: number, addresses: Buffer): Buffer {
  const fixed = Buffer.alloc(4);
  fixed[0] = 0x20 | command;
  fixed[1] = familyProtocol;
  fixed.writeUInt16BE(addresses.length, 2);
  return Buffer.concat([PROXY_V2_SIGNATURE, fixed, addresses]);
}

function tcp4(source: number[], destination: number[], sourcePort: number, destinationPort: number): Buffer {
  const ports = Buffer.alloc(4);
  ports.writeUInt16BE(sourcePort, 0);
  ports.writeUInt16BE(destinationPort, 2);
  return Buffer.concat([Buffer.from(source), Buffer.from(destination), ports]);
}

describe('PROXY protocol v2 headers', () => {
  it('names the client of TCP over IPv4, and says how many bytes the header took (TLVs included)', () => {
    const bytes = Buffer.concat([header(1, 0x11, Buffer.concat([tcp4([203, 0, 113, 7], [10, 0, 0, 2], 51234, 8883), Buffer.from([0x04, 0x00, 0x01, 0x00])])), Buffer.from([0x16, 0x03])]);
    expect(parseProxyHeader(bytes)).toEqual({ kind: 'proxied', address: '203.0.113.7', port: 51234, headerBytes: 32 });
  });

  it('names the client of TCP over IPv6 in its short form', () => {
    const addresses = Buffer.alloc(36);
    Buffer.from('20010db8000000000000000000000042', 'hex').copy(addresses, 0);
    Buffer.from('00000000000000000000000000000001', 'hex').copy(addresses, 16);
    addresses.writeUInt16BE(40000, 32);
    addresses.writeUInt16BE(8883, 34);
    expect(parseProxyHeader(header(1, 0x21, addresses))).toEqual({ kind: 'proxied', address: '2001:db8::42', port: 40000, headerBytes: 52 });
  });

  it('takes LOCAL (the balancer\'s own health check) as the peer itself', () => {
    expect(parseProxyHeader(header(0, 0x00, Buffer.alloc(0)))).toEqual({ kind: 'local', headerBytes: 16 });
  });

  it('waits for more bytes while the header is incomplete, at every length', () => {
    const full = header(1, 0x11, tcp4([192, 0, 2, 1], [10, 0, 0, 2], 1, 2));
    for (let n = 0; n < full.length; n++) expect(parseProxyHeader(full.subarray(0, n))).toEqual({ kind: 'incomplete' });
    expect(parseProxyHeader(full)).toMatchObject({ kind: 'proxied', address: '192.0.2.1', port: 1 });
  });

  it.each([
    ['a TLS ClientHello without a header', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]), 'the connection does not start with a PROXY protocol v2 header'],
    ['version 1 text', Buffer.from('PROXY TCP4 192.0.2.1 10.0.0.2 1 2\r\n'), 'the connection does not start with a PROXY protocol v2 header'],
    ['version 3', Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x31, 0x11, 0, 0])]), 'PROXY protocol version 3 is not 2'],
    ['command 2', Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x22, 0x11, 0, 0])]), 'PROXY protocol command 2 is neither LOCAL nor PROXY'],
    ['a header over the limit', Buffer.concat([PROXY_V2_SIGNATURE, Buffer.from([0x21, 0x11, 0xff, 0xff])]), 'a PROXY protocol header of 65551 bytes is too long'],
    ['UDP over IPv4', header(1, 0x12, tcp4([192, 0, 2, 1], [10, 0, 0, 2], 1, 2)), 'PROXY protocol address family/protocol 0x12 with 12 bytes is not TCP over IPv4 or IPv6'],
    ['IPv4 with short addresses', header(1, 0x11, Buffer.alloc(8)), 'PROXY protocol address family/protocol 0x11 with 8 bytes is not TCP over IPv4 or IPv6'],
  ])('refuses %s', (_name, bytes, reason) => {
    expect(parseProxyHeader(bytes)).toEqual({ kind: 'refused', reason });
  });
});

describe('the header a real HAProxy sends (send-proxy-v2)', () => {
  let dir: string;
  let haproxy: ChildProcess;
  let backend: Server;
  let frontendPort: number;
  // The readiness probe below reaches the backend too: until a test sets its own, close it.
  let accept: (socket: Socket) => void = (socket) => socket.destroy();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'scanhub-haproxy-'));
    backend = createServer((socket) => accept(socket));
    const backendPort = await freePort();
    await new Promise<void>((resolve) => backend.listen(backendPort, '127.0.0.1', resolve));
    frontendPort = await freePort();
    writeFileSync(
      join(dir, 'haproxy.cfg'),
      [
        'global',
        '  log stderr format raw local0 err',
        'defaults',
        '  mode tcp',
        '  timeout connect 5s',
        '  timeout client 30s',
        '  timeout server 30s',
        'frontend mqtt',
        `  bind 127.0.0.1:${frontendPort}`,
        '  default_backend scanhub',
        'backend scanhub',
        `  server one 127.0.0.1:${backendPort} send-proxy-v2`,
        '',
      ].join('\n'),
    );
    haproxy = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
    // Ready once its frontend accepts a connection.
    for (;;) {
      const up = await new Promise<boolean>((resolve) => {
        const probe = connect(frontendPort, '127.0.0.1', () => {
          probe.destroy();
          resolve(true);
        });
        probe.on('error', () => resolve(false));
      });
      if (up) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
  });
  afterAll(async () => {
    haproxy?.kill('SIGKILL');
    backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the client\'s address and port; the client\'s bytes follow the header unchanged', async () => {
    const bytesAtBackend = new Promise<Buffer>((resolve) => {
      accept = (socket) => {
        let data = Buffer.alloc(0);
        socket.on('data', (chunk: Buffer) => {
          data = Buffer.concat([data, chunk]);
          const parsed = parseProxyHeader(data);
          if (parsed.kind !== 'incomplete' && data.length >= (parsed.kind === 'refused' ? 0 : parsed.headerBytes) + 5) {
            resolve(data);
            socket.destroy();
          }
        });
      };
    });
    const client = connect(frontendPort, '127.0.0.1');
    await new Promise<void>((resolve) => client.once('connect', resolve));
    client.write('hello');
    const data = await bytesAtBackend;
    const parsed = parseProxyHeader(data);
    expect(parsed).toMatchObject({ kind: 'proxied', address: '127.0.0.1', port: client.localPort });
    expect(data.subarray((parsed as { headerBytes: number }).headerBytes).toString()).toBe('hello');
    client.destroy();
  });
});

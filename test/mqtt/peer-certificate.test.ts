import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peerCertificateOf } from '../../src/mqtt/peer-certificate.js';
import { issueClientCertificate, issueServerCertificate, loadOrCreateCa, type CertificateAuthority } from '../../src/pki/ca.js';
import { FileSecrets } from '../../src/store/sqlite/secrets.js';

// The broker reads the client certificate once per connection (peer-certificate.ts): the CN as
// issued (also one that a distinguished name would escape), the serial and the expiry, over real
// mutual TLS with certificates of the deployment CA.

let dir: string;
let ca: CertificateAuthority;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'scanhub-peer-'));
  ca = await loadOrCreateCa(new FileSecrets(dir));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The server's side of one mutual-TLS connection whose client shows a certificate of `commonName`. */
async function serverSideOf(commonName: string, serial: string, handle: (socket: TLSSocket) => unknown): Promise<unknown> {
  const server = issueServerCertificate(ca, dir, ['localhost']);
  const client = issueClientCertificate(ca, commonName, serial);
  return new Promise((resolve, reject) => {
    const tls = createServer({ key: server.keyPem, cert: server.certPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: true }, (socket) => {
      resolve(handle(socket));
      socket.destroy();
      tls.close();
    });
    tls.listen(0, '127.0.0.1', () => {
      const { port } = tls.address() as { port: number };
      const socket = connect({ port, host: '127.0.0.1', servername: 'localhost', key: client.keyPem, cert: client.certPem, ca: [ca.certPem] });
      socket.on('error', () => undefined);
      socket.on('close', () => reject(new Error('closed before the server saw it')));
    });
  });
}

describe('peerCertificateOf', () => {
  const names = [
    '3f1f6a52-5b4e-4a53-9d3e-7f1d2a9c0b11',
    'comma, plus+ quote" angle<> semicolon; backslash\\ equals=',
    '#leading hash',
    ' spaces around ',
    'ünïcödé gateway',
    'tab\tand\u0001control',
  ];
  for (const name of names) {
    it(`gives the CN, serial and expiry that getPeerCertificate gives: ${JSON.stringify(name)}`, async () => {
      const [peer, legacy, again] = (await serverSideOf(name, '0a1b2c3d4e5f60718293a4b5c6d7e8f9', (socket) => [
        peerCertificateOf(socket),
        socket.getPeerCertificate(),
        peerCertificateOf(socket),
      ])) as [ReturnType<typeof peerCertificateOf>, ReturnType<TLSSocket['getPeerCertificate']>, ReturnType<typeof peerCertificateOf>];
      expect(peer.cn).toBe(name);
      expect(legacy.subject.CN).toBe(name);
      expect(peer.serial).toBe('0a1b2c3d4e5f60718293a4b5c6d7e8f9');
      expect(peer.serial).toBe(legacy.serialNumber.toLowerCase());
      expect(peer.notAfter).toBe(new Date(legacy.valid_to).toISOString());
      // Read once per connection: the same object the second time.
      expect(again).toBe(peer);
    });
  }
});

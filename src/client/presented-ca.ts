import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { connect, type DetailedPeerCertificate } from 'node:tls';

/** The CA at the end of the chain a deployment presents: its PEM, subject and SHA-256 fingerprint. */
export interface PresentedCa {
  pem: string;
  subject: string;
  fingerprint: string;
}

/**
 * Connects without verifying and returns the self-signed CA that ends the server's chain (for trust
 * on first use), or undefined when the chain does not include one.
 */
export function presentedCa(baseUrl: string): Promise<PresentedCa | undefined> {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    // Nothing is sent over this connection: it only reads the certificates.
    const socket = connect({ host, port: Number(url.port) || 443, servername: isIP(host) ? undefined : host, rejectUnauthorized: false }, () => {
      let certificate: DetailedPeerCertificate = socket.getPeerCertificate(true);
      const seen = new Set<string>();
      while (certificate.issuerCertificate && certificate.issuerCertificate !== certificate && !seen.has(certificate.fingerprint256)) {
        seen.add(certificate.fingerprint256);
        certificate = certificate.issuerCertificate;
      }
      socket.end();
      const root = certificate.raw ? new X509Certificate(certificate.raw) : undefined;
      if (!root || !root.ca || !root.checkIssued(root)) return resolve(undefined);
      resolve({ pem: root.toString(), subject: root.subject.replace(/\n/g, ', '), fingerprint: root.fingerprint256 });
    });
    socket.once('error', reject);
  });
}

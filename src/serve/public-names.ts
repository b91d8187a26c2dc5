import { hostname } from 'node:os';
import { issueServerCertificate, type CertificateAuthority } from '../pki/ca.js';
import type { TlsPair } from '../pki/tls-pair.js';
import type { ServeOptions } from './options.js';

/** Where a default that follows `--host` came from: the option, the listening host, or the machine's host name. */
export type NameSource = 'option' | 'host' | 'host name';

/** Whether the address is every address of the machine, which no client can connect to. */
export function isEveryAddress(host: string): boolean {
  return host === '0.0.0.0' || host === '::';
}

/** The host that clients should use: the machine's name when listening on every address. */
export function reachableHost(host: string): string {
  return isEveryAddress(host) ? hostname() : host;
}

/** Where a default that follows `--host` came from. */
export function sourceOf(option: string | undefined, host: string): NameSource {
  if (option) return 'option';
  return isEveryAddress(host) ? 'host name' : 'host';
}

/**
 * The pair HTTPS serves: the one given, or one the deployment CA issues for every name clients use.
 * The latter's chain ends with the CA itself, so a client that does not trust it yet can show the
 * CA's fingerprint (trust on first use) and save it.
 */
export function httpsPair(options: ServeOptions, ca: CertificateAuthority, dataDir: string, mqttPublicHost: string): TlsPair | undefined {
  if (options.tls !== 'deployment-ca') return options.tls;
  const publicHost = options.publicUrl ? new URL(options.publicUrl).hostname : reachableHost(options.host);
  const issued = issueServerCertificate(ca, dataDir, [options.host, publicHost, mqttPublicHost], undefined, 'https');
  return { certPem: `${issued.certPem.trimEnd()}\n${ca.certPem.trimEnd()}\n`, keyPem: issued.keyPem };
}

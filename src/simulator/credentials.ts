import { X509Certificate } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { createSecureContext, TLSSocket } from 'node:tls';
import { configDir } from '../client/config-dir.js';

/**
 * What a simulated gateway holds after POST /provisioning: the key it made (which never left this
 * machine) and what the service answered. prepare-provisioning works once per gateway, so the
 * simulator keeps these (mode 0600: they hold a private key) to run again later.
 */
export interface GatewayCredentials {
  gateway_id: string;
  mqtt_endpoint: string;
  mqtt_topic_prefix: string;
  certificate_common_name: string;
  /** PKCS#8 PEM of the simulator's own key, its certificate, and the deployment CA. */
  key?: string;
  certificate?: string;
  ca_certificate?: string;
  /** Base64 of a PKCS#12 with the key (empty password): what an earlier version saved instead of the three above. */
  pkcs12?: string;
}

/** The TLS options of the credentials: the PEM files, or the PKCS#12 an earlier version saved. */
export function tlsOptionsOf(credentials: GatewayCredentials): { key: string; cert: string; ca: string } | { pfx: Buffer; passphrase: string } {
  if (credentials.key !== undefined && credentials.certificate !== undefined && credentials.ca_certificate !== undefined) {
    return { key: credentials.key, cert: credentials.certificate, ca: credentials.ca_certificate };
  }
  if (credentials.pkcs12 !== undefined) return { pfx: Buffer.from(credentials.pkcs12, 'base64'), passphrase: '' };
  throw new Error(`the stored credentials of gateway ${credentials.gateway_id} hold neither a key with its certificate nor a PKCS#12`);
}

/** `<config dir>/simulator/<deployment>`: one folder per deployment URL. */
export function credentialsDir(baseUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  const url = new URL(baseUrl);
  const deployment = `${url.protocol}${url.host}${url.pathname}`.replace(/[^A-Za-z0-9.-]+/g, '_').replace(/_+$/, '');
  return join(configDir(env), 'simulator', deployment);
}

function credentialsFile(baseUrl: string, gatewayId: string, env: NodeJS.ProcessEnv): string {
  if (!/^[A-Za-z0-9-]+$/.test(gatewayId)) throw new Error(`unexpected gateway id ${JSON.stringify(gatewayId)}`);
  return join(credentialsDir(baseUrl, env), `${gatewayId}.json`);
}

/** The stored credentials of the gateway at this deployment, if the simulator provisioned it. */
export function loadCredentials(baseUrl: string, gatewayId: string, env: NodeJS.ProcessEnv = process.env): GatewayCredentials | undefined {
  try {
    return JSON.parse(readFileSync(credentialsFile(baseUrl, gatewayId, env), 'utf8')) as GatewayCredentials;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read the stored credentials of gateway ${gatewayId}: ${(error as Error).message}`, { cause: error });
  }
}

/** Stores the credentials with mode 0600 in a 0700 folder; returns the file. */
export function saveCredentials(baseUrl: string, credentials: GatewayCredentials, env: NodeJS.ProcessEnv = process.env): string {
  const dir = credentialsDir(baseUrl, env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = credentialsFile(baseUrl, credentials.gateway_id, env);
  writeFileSync(file, JSON.stringify(credentials, null, 2) + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** The serial number (hex) of the credentials' certificate, as TLS reads it. */
export function certificateSerialOf(credentials: GatewayCredentials): string {
  if (credentials.certificate !== undefined) return new X509Certificate(credentials.certificate).serialNumber;
  const socket = new TLSSocket(new Socket(), { secureContext: createSecureContext(tlsOptionsOf(credentials)) });
  try {
    const serial = (socket.getCertificate() as { serialNumber?: string } | null)?.serialNumber;
    if (!serial) throw new Error(`the stored PKCS#12 of gateway ${credentials.gateway_id} holds no certificate`);
    return serial;
  } finally {
    socket.destroy();
  }
}

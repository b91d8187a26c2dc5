import { createHash, randomBytes } from 'node:crypto';
import { issueClientCertificateAsync, issueClientCertificateForKeyAsync, randomSerialHex, type GatewayPublicKey } from '../pki/ca.js';
import type { KeyType } from '../pki/keys.js';
import { sealGatewayKey } from '../pki/sealed-key.js';
import type { IssuedGatewayCertificate, Preparation } from '../store/ports/index.js';
import type { ServerContext } from './context.js';

/** Where devices redeem their token: the `registration_path` of prepare-provisioning's answer. */
export const REGISTRATION_PATH = '/provisioning';
/** A provisioning token works this long after prepare-provisioning (docs/gateways.md "Provisioning"). */
export const PROVISIONING_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Tokens are stored only as their SHA-256 (hex). */
export function hashProvisioningToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Everything prepare-provisioning creates for one gateway, not yet stored: a key of the configured
 * type (`serve --gateway-key-type`), a client certificate with CN = thing name (= id), and a token
 * of 256 random bits. The key is kept only sealed under the token (src/pki/sealed-key.ts).
 */
export async function createPreparation(ctx: ServerContext, gatewayId: string): Promise<{ preparation: Preparation; token: string; keyType: KeyType }> {
  const serial = randomSerialHex();
  const keyType = ctx.config.gatewayKeyType;
  const issued = await issueClientCertificateAsync(ctx.ca, gatewayId, serial, keyType);
  const token = randomBytes(32).toString('base64url');
  return {
    token,
    keyType,
    preparation: {
      gatewayId,
      certificate: {
        serial,
        commonName: gatewayId,
        certPem: issued.certPem,
        sealedKey: sealGatewayKey(issued.keyPem, token, serial),
        notAfter: issued.notAfter,
      },
      tokenHash: hashProvisioningToken(token),
      expiresAt: ctx.clock() + PROVISIONING_TOKEN_LIFETIME_MS,
    },
  };
}

/** A certificate handed out at redemption instead of the pending one, and its key when the service made it. */
export interface Replacement {
  certificate: IssuedGatewayCertificate;
  /** PKCS#8 PEM of a fresh key; undefined when the device keeps its own (a certificate request). */
  keyPem: string | undefined;
}

/**
 * A certificate for the gateway at redemption: of the device's own public key (its certificate
 * request), or, without one, of a fresh key of the configured type (a token whose sealed key the
 * upgrade to sealed keys dropped). Nothing of it is stored with a key.
 */
export async function createReplacement(ctx: ServerContext, gatewayId: string, publicKey?: GatewayPublicKey): Promise<Replacement> {
  const serial = randomSerialHex();
  const issued: { certPem: string; notAfter: number; keyPem?: string } = publicKey
    ? await issueClientCertificateForKeyAsync(ctx.ca, gatewayId, serial, publicKey)
    : await issueClientCertificateAsync(ctx.ca, gatewayId, serial, ctx.config.gatewayKeyType);
  return { certificate: { serial, commonName: gatewayId, certPem: issued.certPem, sealedKey: null, notAfter: issued.notAfter }, keyPem: issued.keyPem };
}

/** `mqtts://host:port`, with an IPv6 address in brackets. */
export function mqttEndpoint(ctx: ServerContext): string {
  const host = ctx.config.mqttPublicHost.includes(':') ? `[${ctx.config.mqttPublicHost}]` : ctx.config.mqttPublicHost;
  return `mqtts://${host}:${ctx.config.mqttPort}`;
}

/** The answer of prepare-provisioning and reprovision. */
export const preparationSchema = {
  type: 'object',
  properties: {
    registration_path: { type: 'string', description: 'Path, relative to the base URL, where the device redeems the token.' },
    token: { type: 'string', description: 'Single-use token, valid 24 hours: hand it to the device (e.g. as a QR code).' },
    registration_url: { type: 'string', description: 'Addition to the spec: the public base URL joined with registration_path.' },
  },
  required: ['registration_path', 'token'],
} as const;

/** The body of prepare-provisioning and reprovision: where and with what the device fetches its certificate. */
export function preparationBody(ctx: ServerContext, token: string) {
  return { registration_path: REGISTRATION_PATH, token, registration_url: ctx.config.publicUrl + REGISTRATION_PATH };
}

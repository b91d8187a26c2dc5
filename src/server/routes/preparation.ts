import { createHash, randomBytes } from 'node:crypto';
import { issueClientCertificateAsync, issueClientCertificateForKeyAsync, randomSerialHex, type CertificateAuthority, type GatewayPublicKey } from '../../pki/ca.js';
import type { KeyType } from '../../pki/keys.js';
import { sealGatewayKey } from '../../pki/sealed-key.js';
import type { IssuedGatewayCertificate, Preparation } from '../../store/ports/index.js';
import type { ServerContext } from '../context.js';

/** Where devices redeem their token (spec 4.2 `registration_path`). */
export const REGISTRATION_PATH = '/provisioning';
/** A provisioning token works this long after prepare-provisioning (DESIGN.md: 24 h). */
export const PROVISIONING_TOKEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The deployment CA (loaded, or created on a first start, by startServer). */
export function deploymentCa(ctx: ServerContext): CertificateAuthority {
  return ctx.ca;
}

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
  const issued = await issueClientCertificateAsync(deploymentCa(ctx), gatewayId, serial, keyType);
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
    ? await issueClientCertificateForKeyAsync(deploymentCa(ctx), gatewayId, serial, publicKey)
    : await issueClientCertificateAsync(deploymentCa(ctx), gatewayId, serial, ctx.config.gatewayKeyType);
  return { certificate: { serial, commonName: gatewayId, certPem: issued.certPem, sealedKey: null, notAfter: issued.notAfter }, keyPem: issued.keyPem };
}

/** `mqtts://host:port`, with an IPv6 address in brackets. */
export function mqttEndpoint(ctx: ServerContext): string {
  const host = ctx.config.mqttPublicHost.includes(':') ? `[${ctx.config.mqttPublicHost}]` : ctx.config.mqttPublicHost;
  return `mqtts://${host}:${ctx.config.mqttPort}`;
}

/** The body of prepare-provisioning and reprovision: where and with what the device fetches its certificate. */
export function preparationBody(ctx: ServerContext, token: string) {
  return { registration_path: REGISTRATION_PATH, token, registration_url: ctx.config.publicUrl + REGISTRATION_PATH };
}

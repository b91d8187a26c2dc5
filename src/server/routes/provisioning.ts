import type { FastifyInstance } from 'fastify';
import { topicPrefix } from '../../domain/mqtt-topics.js';
import type { GatewayPublicKey } from '../../pki/ca.js';
import { CSR_MAX_LENGTH, CsrRefused, readCertificateRequest } from '../../pki/csr.js';
import { buildPkcs12 } from '../../pki/pkcs12.js';
import { openGatewayKey } from '../../pki/sealed-key.js';
import { auditEntry, auditEntryBy } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, forbidden } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { gatewaySchema, toApiGateway } from '../gateway-view.js';
import { RATE_LIMITS } from '../../domain/rate-limits.js';
import { REGISTRATION_PATH, createPreparation, createReplacement, hashProvisioningToken, mqttEndpoint, preparationBody, preparationSchema, type Replacement } from '../preparation.js';

/** What a device gets for its token: where to connect, its certificate and key (or only the certificates, with a csr). */
const redemptionSchema = {
  type: 'object',
  properties: {
    mqtt_endpoint: { type: 'string', description: 'mqtts://host:port of the broker.' },
    mqtt_topic_prefix: { type: 'string', description: 'Publish to {mqtt_topic_prefix}/gateway/{gateway id}.' },
    certificate_common_name: { type: 'string' },
    gateway: gatewaySchema,
    pkcs12: {
      type: 'string',
      description: 'Base64 of a PKCS#12 file, empty password: the key, the certificate and the CA certificate; with a csr, the two certificates only.',
    },
    certificate: { type: 'string', description: 'Addition to the spec: the gateway\'s client certificate, PEM.' },
    ca_certificate: { type: 'string', description: 'Addition to the spec: the deployment CA certificate, PEM (it also signs the broker\'s certificate).' },
  },
  required: ['mqtt_endpoint', 'mqtt_topic_prefix', 'certificate_common_name', 'gateway', 'pkcs12', 'certificate', 'ca_certificate'],
} as const;

const refusedToken = () =>
  forbidden('The provisioning token is unknown, already used or expired: each token works once, within 24 hours of prepare-provisioning.');

/** The public key of the body's certificate request; 400 saying what is wrong with it. */
function certificateRequest(csr: string): GatewayPublicKey {
  try {
    const { keyType, spki } = readCertificateRequest(csr);
    return { type: keyType, spki };
  } catch (error) {
    if (error instanceof CsrRefused) throw badRequest(`Body field "csr" is refused: ${error.message}.`);
    throw error;
  }
}

/** prepare-provisioning and POST /provisioning (docs/gateways.md "Provisioning"); create-provisioning-package is provisioning-packages.ts's. */
export function registerProvisioningRoutes(app: FastifyInstance, ctx: ServerContext): void {
  prepareProvisioning(app, ctx);
  redeemProvisioningToken(app, ctx);
}

function prepareProvisioning(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string; gateway_id: string } }>('/:customer_id/gateways/:gateway_id/prepare-provisioning', {
    config: { access: { permission: 'gateway.provision' } },
    schema: {
      operationId: 'prepareProvisioning',
      summary: 'Issue the gateway certificate and a single-use token for the device (once per gateway)',
      description: 'The device redeems the token, valid 24 hours, at registration_path (POST /provisioning). A gateway is prepared once.',
      tags: ['provisioning'],
      params: {
        type: 'object',
        properties: { customer_id: { type: 'string' }, gateway_id: { type: 'string' } },
        required: ['customer_id', 'gateway_id'],
      },
      response: { 200: preparationSchema, ...errorResponses },
      refusals: { 403: 'The caller lacks the permission or belongs to another customer, or the gateway does not exist or was already prepared.' },
    },
    handler: async (request) => {
      const { customer_id, gateway_id } = request.params;
      const refuse = (outcome: 'missing' | 'already-prepared', prepared?: number | null) =>
        outcome === 'missing'
          ? forbidden(`Gateway "${gateway_id}" does not exist.`)
          : forbidden(
              `Gateway "${gateway_id}" was already prepared for provisioning${prepared ? ` at ${new Date(prepared).toISOString()}` : ''}; a gateway is prepared only once: create a new gateway for another device.`,
            );
      const gateway = await ctx.store.gateways.byId(customer_id, gateway_id);
      if (!gateway) throw refuse('missing');
      if (gateway.provisioning_prepared !== null) throw refuse('already-prepared', gateway.provisioning_prepared);
      const { preparation, token, keyType } = await createPreparation(ctx, gateway.id);
      const audit = auditEntry(ctx, request, 'gateway.prepared', { type: 'gateway', id: gateway.id }, {
        name: gateway.name,
        certificate_serial: preparation.certificate.serial,
        key_type: keyType,
      });
      const outcome = await ctx.store.provisioning.prepare(customer_id, preparation, ctx.clock(), audit);
      if (outcome !== 'prepared') throw refuse(outcome, (await ctx.store.gateways.byId(customer_id, gateway_id))?.provisioning_prepared);
      return preparationBody(ctx, token);
    },
  });
}

function redeemProvisioningToken(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Body: { token: string; csr?: string } }>(REGISTRATION_PATH, {
    config: { rateLimitGroup: 'provisioning' },
    schema: {
      operationId: 'redeemProvisioningToken',
      summary: 'Device: trade the provisioning token for its certificate and MQTT details (once; no Authorization)',
      description:
        'Called by the device with the token of prepare-provisioning, once. Needs no IdToken: the token authorizes the call. With csr (a PEM PKCS#10 request of an EC P-256 or RSA 2048 key the device made), the certificate is of that key and the device keeps it: pkcs12 then holds the two certificates only. certificate and ca_certificate are the PEM certificates in both cases. The service keeps no private key of a gateway: docs/gateways.md "No gateway key at rest".',
      tags: ['provisioning'],
      body: {
        type: 'object',
        properties: {
          token: { type: 'string', minLength: 1, maxLength: 200, description: 'The token of prepare-provisioning, reprovision or a provisioning package.' },
          csr: {
            type: 'string',
            minLength: 1,
            maxLength: CSR_MAX_LENGTH,
            description:
              'Optional: a PEM PKCS#10 certificate request (`openssl req -new`) of a key the device made and keeps, EC P-256 or RSA 2048. Its subject and extensions are ignored: the certificate gets CN = thing name and the service\'s extensions.',
          },
        },
        required: ['token'],
        additionalProperties: false,
      },
      response: {
        200: redemptionSchema,
        ...errorResponses,
      },
      refusals: {
        400: 'The csr is not a PEM certificate request, its signature does not verify, its key is neither EC P-256 nor RSA 2048, or it is longer than 16384 characters; the token stays unused.',
        403: 'The token is unknown, already used or expired, or its gateway was deleted.',
        429: `More calls a minute from this address than serve --provisioning-rate-limit allows (default ${RATE_LIMITS.provisioning}); Retry-After says when to try again.`,
      },
    },
    handler: async (request) => {
      const { token, csr } = request.body;
      // Read before the token: a request refused leaves the token unused, for the device to retry.
      const publicKey = csr === undefined ? undefined : certificateRequest(csr);
      const tokenHash = hashProvisioningToken(token);
      const now = ctx.clock();
      const redeem = (replacement: Replacement | undefined) =>
        ctx.store.provisioning.redeem(tokenHash, now, replacement?.certificate, ({ gateway, certificate, revokedSerials }) =>
          // The device is the actor, in its gateway's customer (known once the token is redeemed).
          auditEntryBy(ctx, request, { type: 'device', id: gateway.id }, gateway.customer_id, 'gateway.provisioned', { type: 'gateway', id: gateway.id }, {
            name: gateway.name,
            certificate_serial: certificate.serial,
            ...(replacement ? { key: publicKey ? 'device' : 'reissued' } : {}),
            // A re-provisioned device's redemption revokes the certificates it replaces.
            ...(revokedSerials.length ? { revoked_serials: revokedSerials } : {}),
          }),
        );
      // Signed for the token's gateway before the token is used: of concurrent redemptions one stores its certificate.
      const replacementFor = async (key?: GatewayPublicKey) => {
        const pending = await ctx.store.provisioning.pending(tokenHash, now);
        if (!pending) throw refusedToken();
        return createReplacement(ctx, pending.gatewayId, key);
      };
      let replacement = publicKey ? await replacementFor(publicKey) : undefined;
      let outcome = await redeem(replacement);
      if (outcome === 'key-missing') {
        // Prepared before keys were sealed: the upgrade dropped its key, so a fresh one is made now.
        replacement = await replacementFor();
        outcome = await redeem(replacement);
      }
      if (outcome === 'invalid' || outcome === 'key-missing') throw refusedToken();
      if (outcome === 'gateway-gone') throw forbidden('The gateway of this provisioning token does not exist any more.');
      const { gateway, certificate } = outcome;
      const key = replacement ? replacement.keyPem : openGatewayKey(certificate.sealedKey!, token, certificate.serial);
      const caCertPem = ctx.ca.certPem;
      return {
        mqtt_endpoint: mqttEndpoint(ctx),
        mqtt_topic_prefix: topicPrefix(gateway.customer_id),
        certificate_common_name: certificate.commonName,
        gateway: toApiGateway(gateway, now),
        pkcs12: buildPkcs12(key, certificate.certPem, caCertPem, certificate.commonName).toString('base64'),
        certificate: certificate.certPem,
        ca_certificate: caCertPem,
      };
    },
  });
}

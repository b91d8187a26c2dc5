import type { FastifyInstance } from 'fastify';
import { buildPkcs12 } from '../../pki/pkcs12.js';
import { auditEntry, auditEntryBy } from '../audit.js';
import type { ServerContext } from '../context.js';
import { forbidden } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { gatewaySchema, toApiGateway } from './gateway-view.js';
import { REGISTRATION_PATH, createPreparation, deploymentCa, hashProvisioningToken, mqttEndpoint } from './preparation.js';
import { registerPackageRoutes } from './provisioning-packages.js';

export const preparationSchema = {
  type: 'object',
  properties: {
    registration_path: { type: 'string', description: 'Path, relative to the base URL, where the device redeems the token.' },
    token: { type: 'string', description: 'Single-use token, valid 24 hours: hand it to the device (e.g. as a QR code).' },
    registration_url: { type: 'string', description: 'Addition to the spec: the public base URL joined with registration_path.' },
  },
  required: ['registration_path', 'token'],
} as const;

/** prepare-provisioning, POST /provisioning and create-provisioning-package (spec 4.2). */
export function registerProvisioningRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string; gateway_id: string } }>('/:customer_id/gateways/:gateway_id/prepare-provisioning', {
    config: { access: { permission: 'gateway.provision' } },
    schema: {
      summary: 'Issue the gateway certificate and a single-use token for the device (once per gateway)',
      tags: ['provisioning'],
      params: {
        type: 'object',
        properties: { customer_id: { type: 'string' }, gateway_id: { type: 'string' } },
        required: ['customer_id', 'gateway_id'],
      },
      response: { 200: preparationSchema, ...errorResponses },
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
      return { registration_path: REGISTRATION_PATH, token, registration_url: ctx.config.publicUrl + REGISTRATION_PATH };
    },
  });

  app.post<{ Body: { token: string } }>(REGISTRATION_PATH, {
    schema: {
      summary: 'Device: trade the provisioning token for the certificate bundle and MQTT details (once; no Authorization)',
      tags: ['provisioning'],
      body: {
        type: 'object',
        properties: { token: { type: 'string', minLength: 1, maxLength: 200 } },
        required: ['token'],
        additionalProperties: false,
      },
      response: {
        200: {
          type: 'object',
          properties: {
            mqtt_endpoint: { type: 'string', description: 'mqtts://host:port of the broker.' },
            mqtt_topic_prefix: { type: 'string', description: 'Publish to {mqtt_topic_prefix}/gateway/{gateway id}.' },
            certificate_common_name: { type: 'string' },
            gateway: gatewaySchema,
            pkcs12: { type: 'string', description: 'Base64 of a PKCS#12 file (key, certificate, CA certificate), empty password.' },
          },
          required: ['mqtt_endpoint', 'mqtt_topic_prefix', 'certificate_common_name', 'gateway', 'pkcs12'],
        },
        ...errorResponses,
      },
    },
    handler: async (request) => {
      const now = ctx.clock();
      // The device is the actor, in its gateway's customer (known once the token is redeemed).
      const outcome = await ctx.store.provisioning.redeem(hashProvisioningToken(request.body.token), now, ({ gateway, certificate, revokedSerials }) =>
        auditEntryBy(ctx, request, { type: 'device', id: gateway.id }, gateway.customer_id, 'gateway.provisioned', { type: 'gateway', id: gateway.id }, {
          name: gateway.name,
          certificate_serial: certificate.serial,
          // A re-provisioned device's redemption revokes the certificates it replaces.
          ...(revokedSerials.length ? { revoked_serials: revokedSerials } : {}),
        }),
      );
      if (outcome === 'invalid') {
        throw forbidden('The provisioning token is unknown, already used or expired: each token works once, within 24 hours of prepare-provisioning.');
      }
      if (outcome === 'gateway-gone') throw forbidden('The gateway of this provisioning token does not exist any more.');
      const { gateway, certificate } = outcome;
      const pkcs12 = buildPkcs12(certificate.keyPem, certificate.certPem, deploymentCa(ctx).certPem, certificate.commonName);
      return {
        mqtt_endpoint: mqttEndpoint(ctx),
        mqtt_topic_prefix: `scanhub/${gateway.customer_id}`,
        certificate_common_name: certificate.commonName,
        gateway: toApiGateway(gateway, now),
        pkcs12: pkcs12.toString('base64'),
      };
    },
  });

  registerPackageRoutes(app, ctx);
}

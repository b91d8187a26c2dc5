import { X509Certificate } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { certificateStatus } from '../../domain/gateway-certificates.js';
import type { GatewayCertificate } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { conflict, notFound } from '../errors.js';
import { errorResponses } from '../schemas.js';
import { NO_GATEWAY, gatewayParams } from './gateways.js';
import { createPreparation, preparationBody, preparationSchema } from '../preparation.js';

const certificateSchema = {
  type: 'object',
  properties: {
    serial: { type: 'string', description: 'The serial number, lower-case hex, as the certificate carries it.' },
    not_before: { type: 'integer', description: 'Valid from (milliseconds since the epoch).' },
    not_after: { type: 'integer', description: 'Valid until (milliseconds since the epoch): after it every TLS handshake with it is refused.' },
    status: {
      type: 'string',
      enum: ['pending', 'active', 'revoked'],
      description: 'pending until the device fetched it (POST /provisioning), active after that, revoked once revoked.',
    },
  },
  required: ['serial', 'not_before', 'not_after', 'status'],
} as const;

/** The certificate as the API shows it. */
function toApiCertificate(certificate: GatewayCertificate) {
  return {
    serial: certificate.serial,
    not_before: Date.parse(new X509Certificate(certificate.cert_pem).validFrom),
    not_after: certificate.not_after,
    status: certificateStatus(certificate),
  };
}

type GatewayParams = { customer_id: string; gateway_id: string };

const access = { permission: 'gateway.provision' } as const;

const missing = (gatewayId: string) => notFound(`Gateway "${gatewayId}" does not exist.`);
const unprepared = (gatewayId: string) =>
  notFound(`Gateway "${gatewayId}" has no certificate: it was never prepared for provisioning (prepare-provisioning, or \`scanhub gateways provision\`).`);

/** Gateway certificates (docs/gateway-certificates.md): the current one, revoke it, re-provision the gateway. */
export function registerCertificateRoutes(app: FastifyInstance, ctx: ServerContext): void {
  getGatewayCertificate(app, ctx);
  revokeGatewayCertificate(app, ctx);
  reprovisionGateway(app, ctx);
}

function getGatewayCertificate(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: GatewayParams }>('/:customer_id/gateways/:gateway_id/certificate', {
    config: { access },
    schema: {
      operationId: 'getGatewayCertificate',
      summary: 'The current certificate of the gateway: serial, validity, status',
      description: 'The current certificate: pending until the device fetched it, active, or revoked. After reprovision, the new one (pending until redeemed).',
      tags: ['provisioning'],
      params: gatewayParams,
      response: { 200: certificateSchema, ...errorResponses },
      refusals: { 404: 'No gateway with this id or thing name in the customer, or it was never prepared for provisioning (no certificate).' },
    },
    handler: async (request) => {
      const { customer_id, gateway_id } = request.params;
      const current = await ctx.store.certificates.current(customer_id, gateway_id);
      if (current === 'missing') throw missing(gateway_id);
      if (current === 'unprepared') throw unprepared(gateway_id);
      return toApiCertificate(current);
    },
  });
}

function revokeGatewayCertificate(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: GatewayParams }>('/:customer_id/gateways/:gateway_id/revoke-certificate', {
    config: { access },
    schema: {
      operationId: 'revokeGatewayCertificate',
      summary: 'Revoke the certificates of the gateway: its connection is closed and every later one refused',
      description:
        'Revokes every certificate of the gateway: its MQTT connection is closed within a second on whichever instance holds it, and every later connection with them is refused. A pending reprovision token stops working. Answers the current certificate, now revoked.',
      tags: ['provisioning'],
      params: gatewayParams,
      response: { 200: certificateSchema, ...errorResponses },
      refusals: {
        404: 'No gateway with this id or thing name in the customer, or it was never prepared for provisioning (no certificate).',
        409: 'The certificate was already revoked: reprovision gives the gateway a new one.',
      },
    },
    handler: async (request) => {
      const { customer_id, gateway_id } = request.params;
      const outcome = await ctx.store.certificates.revoke(customer_id, gateway_id, ctx.clock(), (certificate) =>
        auditEntry(ctx, request, 'gateway.certificate_revoked', { type: 'gateway', id: certificate.gateway_id }, { certificate_serial: certificate.serial }),
      );
      if (outcome === 'missing') throw missing(gateway_id);
      if (outcome === 'unprepared') throw unprepared(gateway_id);
      if (outcome === 'already-revoked') {
        const current = await ctx.store.certificates.current(customer_id, gateway_id);
        const when = typeof current === 'object' && current.revoked !== null ? ` at ${new Date(current.revoked).toISOString()}` : '';
        throw conflict(
          `The certificate of gateway "${gateway_id}" was already revoked${when}; to give the gateway a new certificate, re-provision it (reprovision, or \`scanhub gateways reprovision\`).`,
        );
      }
      request.log.info({ gateway_id: outcome.gateway_id, serial: outcome.serial }, 'gateway certificate revoked');
      return toApiCertificate(outcome);
    },
  });
}

function reprovisionGateway(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: GatewayParams }>('/:customer_id/gateways/:gateway_id/reprovision', {
    config: { access },
    schema: {
      operationId: 'reprovisionGateway',
      summary: 'A new key, certificate and single-use token for the same gateway (replaced or reset device); the old certificate works until the token is redeemed',
      description:
        'For a replaced or reset device: a new key, certificate and single-use token (24 hours) for the same gateway id, answered as by prepare-provisioning. The previous certificate keeps working until the device redeems the token, then it is revoked and its connection closed.',
      tags: ['provisioning'],
      params: gatewayParams,
      response: { 200: preparationSchema, ...errorResponses },
      refusals: { 404: NO_GATEWAY, 409: 'The gateway was never prepared for provisioning: use prepare-provisioning.' },
    },
    handler: async (request) => {
      const { customer_id, gateway_id } = request.params;
      const refuse = (outcome: 'missing' | 'unprepared') =>
        outcome === 'missing'
          ? missing(gateway_id)
          : conflict(
              `Gateway "${gateway_id}" was never prepared for provisioning, so there is nothing to re-provision: prepare it first (prepare-provisioning, or \`scanhub gateways provision\`).`,
            );
      // Checked before the key is made (which takes a while); the store checks again.
      const current = await ctx.store.certificates.current(customer_id, gateway_id);
      if (typeof current === 'string') throw refuse(current);
      const { preparation, token, keyType } = await createPreparation(ctx, current.gateway_id);
      const audit = auditEntry(ctx, request, 'gateway.reprovisioned', { type: 'gateway', id: current.gateway_id }, {
        certificate_serial: preparation.certificate.serial,
        key_type: keyType,
        replaces: current.serial,
      });
      const outcome = await ctx.store.certificates.reprovision(customer_id, preparation, ctx.clock(), audit);
      if (outcome !== 'reprovisioned') throw refuse(outcome);
      request.log.info({ gateway_id: current.gateway_id, serial: preparation.certificate.serial, key_type: keyType, replaces: current.serial }, 'gateway re-provisioned');
      return preparationBody(ctx, token);
    },
  });
}

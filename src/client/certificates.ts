import type { CustomerApi } from './api.js';
import { gatewayPath } from './gateways.js';

/** A gateway's current certificate as the API returns it (docs/gateway-certificates.md). */
export interface GatewayCertificate {
  serial: string;
  not_before: number;
  not_after: number;
  status: 'pending' | 'active' | 'revoked';
}

/** The gateway's current certificate. */
export function getCertificate(api: CustomerApi, gatewayId: string): Promise<GatewayCertificate> {
  return api.client.get<GatewayCertificate>(gatewayPath(api, gatewayId, 'certificate'));
}

/** Revokes the gateway's certificate: its connection is closed and every later one refused. */
export function revokeCertificate(api: CustomerApi, gatewayId: string): Promise<GatewayCertificate> {
  return api.client.post<GatewayCertificate>(gatewayPath(api, gatewayId, 'revoke-certificate'));
}

import { collectAll, seg, type CustomerApi } from './api.js';

/** A gateway as the API returns it (docs/gateways.md "The gateway object"). */
export interface Gateway {
  id: string;
  model: string;
  manufacturer: string;
  class: string;
  type: string;
  firmware: string;
  created: number;
  last_updated: number;
  usecase: string;
  station: string;
  thing_name: string;
  name: string;
  connectivity_status: string;
  /** When the gateway's last MQTT message arrived (to 8 seconds), or null: an addition to the spec. */
  last_seen: number | null;
  /** When the gateway was first prepared for provisioning, or null: then it is provisioned, else reprovisioned. An addition to the spec. */
  provisioned: number | null;
}

/** One gateway to create, as the create and bulk-create bodies want it. */
export interface GatewayDraft {
  name: string;
  usecase: string;
  station: string;
}

/** What a change may set; the fields left out stay as they are. */
export type GatewayChanges = Partial<GatewayDraft>;

/** A gateway with its version (from the ETag), which `If-Match` names. */
export interface VersionedGateway {
  gateway: Gateway;
  version: string | undefined;
}

/** The bulk-create limit of the API: larger files are refused rather than sent in parts. */
export const BULK_CREATE_MAX = 500;

/** The path of the customer's gateways. */
export const gatewaysPath = (api: CustomerApi) => `${api.base}/gateways`;

/** The path of one gateway, or of one of its resources (`certificate`, `reprovision`...). */
export const gatewayPath = (api: CustomerApi, gatewayId: string, resource?: string) =>
  `${gatewaysPath(api)}/${seg(gatewayId)}${resource === undefined ? '' : `/${resource}`}`;

/** The version inside an ETag (`"3"` -> `3`). */
function versionOf(etag: unknown): string | undefined {
  return typeof etag === 'string' ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined;
}

/** Every gateway of the customer. */
export function listGateways(api: CustomerApi): Promise<Gateway[]> {
  return collectAll<Gateway>(api.client, gatewaysPath(api));
}

/** One gateway with its version. */
export async function getGateway(api: CustomerApi, gatewayId: string): Promise<VersionedGateway> {
  const response = await api.client.request<Gateway>('GET', gatewayPath(api, gatewayId));
  return { gateway: response.body, version: versionOf(response.headers.etag) };
}

/** Creates a gateway. */
export async function createGateway(api: CustomerApi, draft: GatewayDraft): Promise<VersionedGateway> {
  const response = await api.client.request<Gateway>('POST', gatewaysPath(api), { body: draft });
  return { gateway: response.body, version: versionOf(response.headers.etag) };
}

/** Changes a gateway; with `ifMatch`, only while it is still at that version. */
export async function updateGateway(api: CustomerApi, gatewayId: string, changes: GatewayChanges, ifMatch?: string): Promise<VersionedGateway> {
  const headers: Record<string, string> = {};
  if (ifMatch !== undefined) headers['if-match'] = `"${ifMatch.replace(/"/g, '')}"`;
  const response = await api.client.request<Gateway>('PATCH', gatewayPath(api, gatewayId), { body: changes, headers });
  return { gateway: response.body, version: versionOf(response.headers.etag) };
}

/** Deletes a gateway: its certificate stops working. */
export function deleteGateway(api: CustomerApi, gatewayId: string): Promise<void> {
  return api.client.delete(gatewayPath(api, gatewayId));
}

/** Creates up to BULK_CREATE_MAX gateways, all or none. */
export function bulkCreateGateways(api: CustomerApi, drafts: GatewayDraft[]): Promise<Gateway[]> {
  return api.client.post<Gateway[]>(`${gatewaysPath(api)}/bulk-create`, { gateways: drafts });
}

import type { CustomerApi } from '../../client/api.js';
import { ApiError } from '../../client/api.js';
import type { Device } from '../../client/devices.js';
import { listGateways } from '../../client/gateways.js';
import { formatTime, type Column, type Io } from '../io.js';

/** Gateway names by id, to show beside the ids of devices; empty when the caller may not read gateways (an API key with event.read only). */
export async function gatewayNames(api: CustomerApi): Promise<Map<string, string>> {
  try {
    return new Map((await listGateways(api)).map((gateway) => [gateway.id, gateway.name]));
  } catch (error) {
    if (error instanceof ApiError && error.status === 403) return new Map();
    throw error;
  }
}

/** A gateway as tables show it: its name beside its short id (DESIGN.md "CLI conventions"), or the id alone when it has none (deleted). */
export function gatewayLabel(id: string | null, names: ReadonlyMap<string, string>): string {
  if (id === null) return '';
  const name = names.get(id);
  return name === undefined ? id : `${name} (${id.slice(0, 8)})`;
}

/** The columns of device tables and tab-separated rows. */
export const deviceColumns = (io: Io, names: ReadonlyMap<string, string>): Column<Device>[] => [
  { header: 'DEVICE', value: (d) => d.device_id },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'BATTERY', value: (d) => d.battery },
  { header: 'FIRMWARE', value: (d) => d.firmware },
  { header: 'TEMPERATURE', value: (d) => d.temperature },
  { header: 'GATEWAY', value: (d) => gatewayLabel(d.last_gateway_id, names) },
  { header: 'LAST SEEN', value: (d) => formatTime(io, d.last_seen) },
];

/** The fields of one device (`show`). */
export const deviceFields = (io: Io, names: ReadonlyMap<string, string>): Column<Device>[] => [
  { header: 'device_id', value: (d) => d.device_id },
  { header: 'status', value: (d) => d.status },
  { header: 'battery', value: (d) => d.battery },
  { header: 'firmware', value: (d) => d.firmware },
  { header: 'temperature', value: (d) => d.temperature },
  { header: 'last_gateway', value: (d) => gatewayLabel(d.last_gateway_id, names) },
  { header: 'last_seen', value: (d) => formatTime(io, d.last_seen) },
  { header: 'first_seen', value: (d) => formatTime(io, d.first_seen) },
];

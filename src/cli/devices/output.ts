import type { Device } from '../../client/devices.js';
import { gatewayLabel } from '../gateway-refs.js';
import { formatTime, type Column, type Io } from '../io.js';

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

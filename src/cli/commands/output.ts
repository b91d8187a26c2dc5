import type { Command } from '../../client/commands.js';
import { gatewayLabel } from '../gateway-refs.js';
import { formatTime, type Column, type Io } from '../io.js';

/** The columns of command tables and tab-separated rows. */
export const commandColumns = (io: Io, names: ReadonlyMap<string, string>): Column<Command>[] => [
  { header: 'ID', value: (c) => c.command_id },
  { header: 'GATEWAY', value: (c) => gatewayLabel(c.gateway_id, names) },
  { header: 'DEVICE', value: (c) => c.device_id ?? '' },
  { header: 'NAME', value: (c) => c.name },
  { header: 'STATUS', value: (c) => c.status },
  { header: 'CREATED', value: (c) => formatTime(io, c.created) },
  { header: 'DETAILS', value: (c) => c.details ?? '' },
];

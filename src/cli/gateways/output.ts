import type { Gateway } from '../../client/gateways.js';
import { formatTime, type Column, type Io } from '../io.js';

/** The columns of gateway tables (`list`, `bulk-create`). */
export const gatewayColumns = (io: Io): Column<Gateway>[] => [
  { header: 'ID', value: (g) => g.id },
  { header: 'NAME', value: (g) => g.name },
  { header: 'USECASE', value: (g) => g.usecase },
  { header: 'STATION', value: (g) => g.station },
  { header: 'STATUS', value: (g) => g.connectivity_status },
  { header: 'CREATED', value: (g) => formatTime(io, g.created) },
];

/** The fields of one gateway (`get`, `create`, `update`), with its version when known. */
export const gatewayFields = (io: Io, version?: string): Column<Gateway>[] => [
  { header: 'id', value: (g) => g.id },
  { header: 'name', value: (g) => g.name },
  { header: 'usecase', value: (g) => g.usecase },
  { header: 'station', value: (g) => g.station },
  { header: 'type', value: (g) => g.type },
  { header: 'connectivity_status', value: (g) => g.connectivity_status },
  { header: 'model', value: (g) => g.model },
  { header: 'manufacturer', value: (g) => g.manufacturer },
  { header: 'firmware', value: (g) => g.firmware },
  { header: 'thing_name', value: (g) => g.thing_name },
  { header: 'created', value: (g) => formatTime(io, g.created) },
  { header: 'last_updated', value: (g) => formatTime(io, g.last_updated) },
  ...(version !== undefined ? [{ header: 'version', value: () => version }] : []),
];

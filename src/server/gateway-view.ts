import { connectivityStatus } from '../domain/connectivity.js';
import type { GatewayRecord } from '../store/ports/index.js';
import { badRequest } from './errors.js';

/** A gateway as the API shows it (docs/gateways.md "The gateway object"). Unknown model, manufacturer and firmware are empty strings. */
export const gatewaySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    model: { type: 'string' },
    manufacturer: { type: 'string' },
    class: { type: 'string', enum: ['gateway'] },
    type: { type: 'string', enum: ['stationary', 'mobile'] },
    firmware: { type: 'string' },
    created: { type: 'integer', description: 'Milliseconds since the epoch.' },
    last_updated: { type: 'integer', description: 'Milliseconds since the epoch.' },
    usecase: { type: 'string' },
    station: { type: 'string' },
    thing_name: { type: 'string', description: 'The IoT thing name: equal to id.' },
    name: { type: 'string' },
    connectivity_status: { type: 'string', enum: ['NOT_REGISTERED', 'REGISTERING', 'ACTIVE', 'INACTIVE'] },
    last_seen: {
      type: ['integer', 'null'],
      description: "Addition to the spec: when the gateway's last MQTT message arrived (milliseconds since the epoch, to 8 seconds); null: never.",
    },
    provisioned: {
      type: ['integer', 'null'],
      description: 'Addition to the spec: when the gateway was first prepared for provisioning (milliseconds since the epoch); null: never, so `prepare-provisioning` applies, else `reprovision`.',
    },
  },
  required: ['id', 'model', 'manufacturer', 'class', 'type', 'firmware', 'created', 'last_updated', 'usecase', 'station', 'thing_name', 'name', 'connectivity_status', 'last_seen', 'provisioned'],
} as const;

/** The gateway as the API shows it at `now` (connectivity_status depends on the time). */
export function toApiGateway(gateway: GatewayRecord, now: number) {
  return {
    id: gateway.id,
    model: gateway.model ?? '',
    manufacturer: gateway.manufacturer ?? '',
    class: 'gateway',
    type: gateway.type,
    firmware: gateway.firmware ?? '',
    created: gateway.created,
    last_updated: gateway.last_updated,
    usecase: gateway.usecase,
    station: gateway.station,
    thing_name: gateway.id,
    name: gateway.name,
    connectivity_status: connectivityStatus(gateway, now),
    last_seen: gateway.last_message,
    provisioned: gateway.provisioning_prepared,
  };
}

export type ApiGateway = ReturnType<typeof toApiGateway>;

/** A string field of a gateway body: 1..200 characters (further checked by `checkGatewayText`). */
export const gatewayText = { type: 'string', minLength: 1, maxLength: 200 } as const;

export const gatewayFields = { name: gatewayText, usecase: gatewayText, station: gatewayText } as const;

/**
 * Names, use cases and stations are shown in tables and tab-separated output: no control
 * characters, and not only blanks.
 */
export function checkGatewayText(field: string, value: string | undefined): void {
  if (value === undefined) return;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) throw badRequest(`Body field "${field}" must not contain control characters (tabs, line breaks).`);
  if (value.trim() === '') throw badRequest(`Body field "${field}" must not be blank.`);
}

/** The ETag of a gateway: its version, quoted as HTTP wants an entity tag. */
export function etagOf(gateway: GatewayRecord): string {
  return `"${gateway.version}"`;
}

/**
 * The version an `If-Match` header demands: undefined when absent or `*`. Accepts `"3"`, `W/"3"`
 * and a bare `3`; a list matches when any entry does, so its versions are returned.
 */
export function parseIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  return header.split(',').map((entry) => {
    const match = /^\s*(?:W\/)?"?(\d{1,15})"?\s*$/.exec(entry);
    if (!match) throw badRequest(`Header "If-Match" must be the gateway's ETag (its version, e.g. "3"), not ${JSON.stringify(entry.trim())}.`);
    return Number(match[1]);
  });
}

import type { FastifyInstance } from 'fastify';
import { deviceListFilters, nextDeviceToken, resolveDeviceListQuery, type DeviceListParams, type DeviceListQuery } from '../../domain/device-listing.js';
import { DEVICE_STATUSES, lastSeenRange, toApiDevice } from '../../domain/devices.js';
import type { DeviceFilter } from '../../store/ports/index.js';
import type { ServerContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { customerParams, errorResponses, listBody, listOf } from '../schemas.js';

const nullable = (type: string, description: string) => ({ type: [type, 'null'], description }) as const;

/** A scanner as the API shows it (docs/devices.md); a value never reported is null. */
const deviceSchema = {
  type: 'object',
  properties: {
    device_id: { type: 'string', description: 'The scanner\'s id, as its events carry it (device_id).' },
    first_seen: { type: 'integer', description: 'The oldest created of its events, in milliseconds since the epoch.' },
    last_seen: { type: 'integer', description: 'The newest created of its events, in milliseconds since the epoch, to 8 s: ingest writes it again only once it has moved 8 s or a value has changed.' },
    last_gateway_id: nullable('string', 'The gateway that relayed its newest event.'),
    battery: nullable('number', 'The battery level of its newest event that reported one.'),
    firmware: nullable('string', 'The firmware version of its newest event that reported one.'),
    temperature: nullable('number', 'The temperature of its newest event that reported one.'),
    status: {
      type: 'string',
      enum: [...DEVICE_STATUSES],
      description: 'At the time of the request: ACTIVE with an event in the last 2 hours, LOST with none for 7 days, else INACTIVE.',
    },
  },
  required: ['device_id', 'first_seen', 'last_seen', 'last_gateway_id', 'battery', 'firmware', 'temperature', 'status'],
} as const;

const deviceParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, device_id: { type: 'string', description: 'The scanner\'s id, exactly (case matters).' } },
  required: ['customer_id', 'device_id'],
} as const;

/** PostgreSQL text cannot hold NUL, so no stored id or gateway has one: such a value names nothing. */
const hasNul = (text: string | undefined) => text !== undefined && text.includes('\u0000');

function describe(query: DeviceListQuery): string {
  const filters = deviceListFilters(query);
  return `Scanners of the customer${filters.length ? ` with ${filters.map((f) => `${f.name} ${f.value}`).join(', ')}` : ''}, by device_id`;
}

/** The store's filter of the query at `now` (a status is a range of last_seen, domain/devices.ts). */
function filterOf(query: DeviceListQuery, now: number): DeviceFilter {
  return {
    ...(query.gatewayId !== undefined ? { gatewayId: query.gatewayId } : {}),
    ...(query.status !== undefined ? { lastSeen: lastSeenRange(query.status, now) } : {}),
    ...(query.batteryBelow !== undefined ? { batteryBelow: query.batteryBelow } : {}),
  };
}

/** `GET /{customer_id}/devices` and `GET /{customer_id}/devices/{device_id}`: the scanners the events name. */
export function registerDeviceRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: DeviceListParams }>('/:customer_id/devices', {
    config: { access: { permission: 'event.read' } },
    schema: {
      operationId: 'listDevices',
      summary: 'Scanners of the customer, by device_id, in pages of up to 500',
      description:
        'Every scanner the customer\'s events name, with its newest battery, firmware and temperature and its status now; links.next continues the query. Filters: the gateway of its newest event, its status, and battery_below (a scanhub addition, for the console\'s low-battery filter).',
      tags: ['devices'],
      params: customerParams,
      querystring: {
        type: 'object',
        properties: {
          gateway_id: { type: 'string', minLength: 1, maxLength: 200, description: 'Only scanners whose newest event this gateway relayed.' },
          status: { type: 'string', enum: [...DEVICE_STATUSES], description: 'Only scanners of this status now.' },
          battery_below: {
            type: 'number',
            minimum: 0,
            maximum: 100,
            description: 'Only scanners whose last reported battery is below this; scanners that never reported one are left out.',
          },
          next_token: { type: 'string', minLength: 1, maxLength: 2048, description: 'From links.next: continues the query of the previous page.' },
          limit: { type: 'integer', minimum: 1, maximum: 500, description: 'Scanners per page, 1..500. Default 500, or the limit of next_token.' },
        },
        additionalProperties: false,
      },
      response: { 200: listOf(deviceSchema, 'A page of scanners'), ...errorResponses },
    },
    handler: async (request) => {
      const customerId = request.params.customer_id;
      const query = resolveDeviceListQuery(request.query, customerId);
      if ('invalid' in query) throw badRequest(query.invalid);
      if (hasNul(query.gatewayId)) throw badRequest('Query parameter "gateway_id" must not contain a NUL character: no gateway id has one.');
      const now = ctx.clock();
      const rows = await ctx.store.devices.page(customerId, query.after, query.limit + 1, filterOf(query, now));
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      const next = rows.length > query.limit && last ? `/${encodeURIComponent(customerId)}/devices?next_token=${nextDeviceToken(customerId, query, last.device_id)}` : undefined;
      return listBody(page.map((record) => toApiDevice(record, now)), describe(query), next, deviceListFilters(query));
    },
  });

  app.get<{ Params: { customer_id: string; device_id: string } }>('/:customer_id/devices/:device_id', {
    config: { access: { permission: 'event.read' } },
    schema: {
      operationId: 'getDevice',
      summary: 'One scanner, by its device_id',
      description: 'The scanner with its newest battery, firmware and temperature, the gateway of its newest event, and its status now.',
      tags: ['devices'],
      params: deviceParams,
      response: { 200: deviceSchema, ...errorResponses },
      refusals: { 404: 'No event of the customer names this device_id.' },
    },
    handler: async (request) => {
      const { customer_id, device_id } = request.params;
      const record = hasNul(device_id) ? undefined : await ctx.store.devices.byId(customer_id, device_id);
      if (!record) throw notFound(`Device "${device_id}" does not exist: no event of customer "${customer_id}" names it.`);
      return toApiDevice(record, ctx.clock());
    },
  });
}

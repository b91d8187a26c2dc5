import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { GatewayNameTaken, PreparationRefused, type NewGateway, type Preparation } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, conflict, forbidden } from '../errors.js';
import { customerParams, errorResponses } from '../schemas.js';
import { signDownloadLink } from './downloads.js';
import { duplicateNames } from './gateways.js';
import { checkGatewayText, gatewayText } from '../gateway-view.js';
import { PROVISIONING_TOKEN_LIFETIME_MS, REGISTRATION_PATH, createPreparation } from '../preparation.js';

/** At most this many gateways per package call: each costs a key and a signature (docs/gateways.md "Provisioning packages"). */
export const PACKAGE_MAX = 100;
/** New gateways made by a package call get this use case unless the element names one. */
export const DEFAULT_PACKAGE_USECASE = 'default';
/** Keys generated at once: two cores, and libuv's pool is shared with file I/O. */
const KEYGEN_CONCURRENCY = 2;

interface PackageElement {
  gateway_id?: string;
  gateway_name?: string;
  usecase?: string;
  station?: string;
}

interface Wifi {
  ssid?: string;
  password?: string;
  authentication_type?: string;
}

const wifiText = { type: 'string', maxLength: 200 } as const;

/** 1..PACKAGE_MAX elements, each an existing gateway or a new one, and the Wi-Fi settings every package carries. */
const packageBody = {
  type: 'object',
  properties: {
    gateways: {
      type: 'array',
      minItems: 1,
      maxItems: PACKAGE_MAX,
      items: {
        type: 'object',
        description: `Either gateway_id (an existing, not yet prepared gateway) or gateway_name (a new gateway; usecase defaults to "${DEFAULT_PACKAGE_USECASE}", station to the name).`,
        properties: { gateway_id: { type: 'string', minLength: 1 }, gateway_name: gatewayText, usecase: gatewayText, station: gatewayText },
        additionalProperties: false,
      },
    },
    wifi: {
      type: 'object',
      properties: { ssid: wifiText, password: wifiText, authentication_type: wifiText },
      additionalProperties: false,
    },
  },
  required: ['gateways'],
  additionalProperties: false,
} as const;

/** One signed package link per gateway, in request order. */
const packageResponse = {
  type: 'object',
  properties: {
    gateways: {
      type: 'array',
      items: { type: 'object', properties: { gateway_id: { type: 'string' }, package_url: { type: 'string' } }, required: ['gateway_id', 'package_url'] },
    },
  },
  required: ['gateways'],
} as const;

/** Runs `task` over the items with at most `limit` running at once; results in item order. */
async function mapConcurrently<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Package files hold live tokens: they go once the token (and the link) can no longer work. The
 * expiry is the first part of the file name, so the sweep needs no reads and follows ctx.clock().
 */
function sweepExpiredPackages(dir: string, now: number): void {
  for (const name of readdirSync(dir)) {
    const expires = Number(/^(\d+)-[0-9a-f]+\.json$/.exec(name)?.[1]);
    if (expires <= now) rmSync(join(dir, name), { force: true });
  }
}

/** The gateways a package call means, in request order, and which of them to create. */
interface PackageTargets {
  ids: string[];
  fresh: NewGateway[];
}

/** Which gateway each element means, checked before any key is generated. */
async function resolveElements(ctx: ServerContext, customerId: string, elements: PackageElement[]): Promise<PackageTargets> {
  const ids: string[] = [];
  const fresh: NewGateway[] = [];
  for (const [index, element] of elements.entries()) {
    const field = `gateways.${index}`;
    if ((element.gateway_id === undefined) === (element.gateway_name === undefined)) {
      throw badRequest(`Body field "${field}" must name either "gateway_id" (an existing gateway) or "gateway_name" (a new one), not ${element.gateway_id === undefined ? 'neither' : 'both'}.`);
    }
    if (element.gateway_id !== undefined) {
      if (element.usecase !== undefined || element.station !== undefined) {
        throw badRequest(`Body field "${field}" names an existing gateway: "usecase" and "station" apply only with "gateway_name"; change an existing gateway with PATCH.`);
      }
      const gateway = await ctx.store.gateways.byId(customerId, element.gateway_id);
      if (!gateway) throw badRequest(`Body field "${field}.gateway_id": gateway "${element.gateway_id}" does not exist.`);
      if (gateway.provisioning_prepared !== null) {
        throw badRequest(`Body field "${field}.gateway_id": gateway "${element.gateway_id}" was already prepared for provisioning; a gateway is prepared only once.`);
      }
      ids.push(gateway.id);
      continue;
    }
    const name = element.gateway_name!;
    checkGatewayText(`${field}.gateway_name`, name);
    checkGatewayText(`${field}.usecase`, element.usecase);
    checkGatewayText(`${field}.station`, element.station);
    const id = randomUUID();
    ids.push(id);
    fresh.push({ id, name, usecase: element.usecase ?? DEFAULT_PACKAGE_USECASE, station: element.station ?? name });
  }
  const repeatedIds = duplicateNames(ids);
  if (repeatedIds.length) throw badRequest(`Gateway "${repeatedIds[0]}" appears more than once in body field "gateways".`);
  const repeatedNames = duplicateNames(fresh.map((g) => g.name));
  if (repeatedNames.length) throw conflict(`Gateway names must be unique: "${repeatedNames[0]}" appears more than once in this request.`);
  const taken = await ctx.store.gateways.takenNames(customerId, fresh.map((g) => g.name));
  if (taken.length) throw conflict(`A gateway named "${taken[0]}" already exists: name it by "gateway_id" to provision it.`);
  return { ids, fresh };
}

/** `POST /{customer_id}/create-provisioning-package` (docs/gateways.md "Provisioning packages"). */
export function registerPackageRoutes(app: FastifyInstance, ctx: ServerContext): void {
  const packageDir = join(ctx.config.blobDir, 'packages');
  mkdirSync(packageDir, { recursive: true, mode: 0o700 });

  app.post<{ Params: { customer_id: string }; Body: { gateways: PackageElement[]; wifi?: Wifi } }>('/:customer_id/create-provisioning-package', {
    config: { access: { permission: 'gateway.provision' } },
    schema: {
      operationId: 'createProvisioningPackage',
      summary: `Prepare provisioning for 1..${PACKAGE_MAX} existing or new gateways; one signed package link (24 h) each`,
      description:
        'Each package is a document with the registration token and the optional Wi-Fi settings. New gateways (gateway_name) need gateway.write as well. All gateways or none.',
      tags: ['provisioning'],
      params: customerParams,
      body: packageBody,
      response: {
        200: packageResponse,
        ...errorResponses,
      },
      refusals: { 409: 'A new gateway\'s name repeats in the list or is taken.' },
    },
    handler: async (request) => {
      const customerId = request.params.customer_id;
      const { ids, fresh } = await resolveElements(ctx, customerId, request.body.gateways);
      if (fresh.length && !request.principal!.permissions.includes('gateway.write')) {
        throw forbidden('Creating gateways through a package ("gateway_name") needs the permission "gateway.write" as well; ask an administrator.');
      }
      const prepared = await mapConcurrently(ids, KEYGEN_CONCURRENCY, (id) => createPreparation(ctx, id));

      mkdirSync(packageDir, { recursive: true, mode: 0o700 });
      const now = ctx.clock();
      sweepExpiredPackages(packageDir, now);
      const written: string[] = [];
      try {
        // The files first, then the rows in one unit of work: refused, the files go again.
        for (const { preparation, token } of prepared) written.push(writePackage(ctx, packageDir, preparation, token, request.body.wifi));
        const audit = [
          ...fresh.map((g) => auditEntry(ctx, request, 'gateway.created', { type: 'gateway', id: g.id }, { name: g.name })),
          ...prepared.map(({ preparation, keyType }) =>
            auditEntry(ctx, request, 'gateway.prepared', { type: 'gateway', id: preparation.gatewayId }, {
              certificate_serial: preparation.certificate.serial,
              key_type: keyType,
              package: true,
            }),
          ),
        ];
        await ctx.store.provisioning.preparePackage(customerId, fresh, prepared.map(({ preparation }) => preparation), now, audit);
      } catch (error) {
        for (const file of written) rmSync(join(packageDir, file), { force: true });
        if (error instanceof GatewayNameTaken) throw conflict(`A gateway named "${error.names[0]}" already exists.`);
        if (error instanceof PreparationRefused) {
          throw badRequest(`Gateway "${error.gatewayId}" ${error.reason === 'missing' ? 'does not exist' : 'was already prepared for provisioning'}.`);
        }
        throw error;
      }
      return {
        gateways: ids.map((gateway_id, i) => ({
          gateway_id,
          package_url: signDownloadLink(ctx, `packages/${written[i]}`, PROVISIONING_TOKEN_LIFETIME_MS),
        })),
      };
    },
  });
}

/** Writes one package document (mode 0600: it holds a live token and the Wi-Fi password); its file name. */
function writePackage(ctx: ServerContext, dir: string, preparation: Preparation, token: string, wifi: Wifi | undefined): string {
  const file = `${preparation.expiresAt}-${randomBytes(16).toString('hex')}.json`;
  const document = {
    base_url: ctx.config.publicUrl,
    registration_path: REGISTRATION_PATH,
    token,
    wifi: wifi ?? null,
    gateway_id: preparation.gatewayId,
    expires_at: preparation.expiresAt,
    // The deployment CA: it signs the broker's certificate and, with `serve --https`, the API's,
    // so a device can verify both before it holds its PKCS#12.
    ca_certificate: ctx.ca.certPem,
  };
  writeFileSync(join(dir, file), JSON.stringify(document, null, 2) + '\n', { mode: 0o600, flag: 'wx' });
  return file;
}

import type { FastifyInstance } from 'fastify';
import { ASSET_LINK_LIFETIME_MS, ASSET_TYPES, assetPath, type AssetType } from '../../domain/assets.js';
import type { Asset } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { customerParams, errorResponses, listBody, listOf } from '../schemas.js';
import { signDownloadLink } from './downloads.js';

/** local@domain, as the operator commands accept it (user accounts such as admin@localhost included). */
const EMAIL_ADDRESS = /^[^\s@]+@[^\s@]+$/;

const assetSchema = {
  type: 'object',
  properties: {
    asset_type: { type: 'string', enum: [...ASSET_TYPES] },
    asset_version: { type: 'string' },
    default: { type: 'boolean', description: 'The latest registered version of its type: downloaded when no asset_version is given.' },
    file_name: { type: 'string' },
    file_size: { type: 'integer' },
    file_sha256: { type: 'string', description: 'SHA-256 of the file, lower-case hex.' },
    eula_version: { type: 'string', description: 'Pass it as eula_version to generate-download-url.' },
    eula_checksum: { type: 'string', description: 'SHA-256 of eula_text in UTF-8, upper-case hex.' },
    eula_text: { type: 'string' },
    registered: { type: 'integer' },
  },
  required: ['asset_type', 'asset_version', 'default', 'file_name', 'file_size', 'file_sha256', 'eula_version', 'eula_checksum', 'eula_text', 'registered'],
} as const;

interface DownloadBody {
  eula_version: string;
  eula_checksum?: string;
  asset_type: AssetType;
  agreed_by: string;
  asset_version?: string;
}

const describeAsset = (asset: Asset) => `${asset.asset_type} ${asset.asset_version}`;

/** Assets (docs/jobs-and-assets.md "Assets"): the EULA-gated download link and, as an extension, the list with the EULAs to agree to. */
export function registerAssetRoutes(app: FastifyInstance, ctx: ServerContext): void {
  listAssets(app, ctx);
  generateDownloadUrl(app, ctx);
}

function listAssets(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: { asset_type?: AssetType } }>('/:customer_id/assets', {
    config: { access: { permission: 'asset.download' } },
    schema: {
      operationId: 'listAssets',
      summary: 'Downloadable assets with the EULA text, version and checksum that govern each (extension)',
      description: 'Agree to an asset\'s EULA (its version and checksum) with generate-download-url to download it.',
      tags: ['assets'],
      params: customerParams,
      querystring: { type: 'object', properties: { asset_type: { type: 'string', enum: [...ASSET_TYPES] } } },
      response: { 200: listOf(assetSchema, 'List of assets'), ...errorResponses },
    },
    handler: async (request) => {
      const { asset_type } = request.query;
      const filters = asset_type ? [{ name: 'asset_type', value: asset_type }] : [];
      return listBody(await ctx.store.assets.list(asset_type), 'Assets of this deployment, newest version of each type first', undefined, filters);
    },
  });
}

function generateDownloadUrl(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Body: DownloadBody }>('/:customer_id/generate-download-url', {
    config: { access: { permission: 'asset.download' } },
    schema: {
      operationId: 'generateDownloadUrl',
      summary: "Agree to an asset's EULA and get a download link valid 10 minutes",
      description: 'Records who agreed to which EULA; eula_version, and eula_checksum when sent, must be those of the asset.',
      tags: ['assets'],
      params: customerParams,
      body: {
        type: 'object',
        properties: {
          eula_version: { type: 'string', minLength: 1, maxLength: 100 },
          eula_checksum: { type: 'string', pattern: '^[A-Z0-9]+$', maxLength: 128, description: 'Upper-case hex SHA-256 of the EULA text.' },
          asset_type: { type: 'string', enum: [...ASSET_TYPES] },
          // Checked in the handler: the JSON-schema "email" format refuses addresses without a dot
          // in the domain, such as the default administrator admin@localhost.
          agreed_by: { type: 'string', minLength: 1, maxLength: 320, description: 'E-mail address of who agreed.' },
          asset_version: { type: 'string', minLength: 1, maxLength: 100, description: 'Default: the latest version of the type.' },
        },
        required: ['eula_version', 'asset_type', 'agreed_by'],
        additionalProperties: false,
      },
      response: {
        200: { type: 'object', properties: { download_url: { type: 'string' } }, required: ['download_url'] },
        ...errorResponses,
      },
      refusals: { 404: 'No asset of this type, or of this version.' },
    },
    handler: async (request) => {
      const { eula_version, eula_checksum, asset_type, agreed_by, asset_version } = request.body;
      if (!EMAIL_ADDRESS.test(agreed_by)) throw badRequest(`Body field "agreed_by" must be an e-mail address, not "${agreed_by}".`);
      const asset = await ctx.store.assets.find(asset_type, asset_version);
      if (!asset) {
        throw notFound(
          asset_version === undefined
            ? `No asset of type ${asset_type} is available.`
            : `No asset of type ${asset_type} with version "${asset_version}" is available.`,
        );
      }
      if (eula_version !== asset.eula_version) {
        throw badRequest(
          `Body field "eula_version" is "${eula_version}", but the EULA of ${describeAsset(asset)} is version "${asset.eula_version}": read and agree to that one.`,
        );
      }
      if (eula_checksum !== undefined && eula_checksum !== asset.eula_checksum) {
        throw badRequest(
          `Body field "eula_checksum" does not match the EULA version "${asset.eula_version}" of ${describeAsset(asset)}: fetch its text again (GET /{customer_id}/assets).`,
        );
      }
      const now = ctx.clock();
      const audit = auditEntry(ctx, request, 'eula.agreed', { type: 'asset', id: asset.id }, {
        asset_type: asset.asset_type,
        asset_version: asset.asset_version,
        eula_version: asset.eula_version,
        agreed_by,
      });
      await ctx.store.assets.recordAgreement({
        agreed_at: now,
        customer_id: request.params.customer_id,
        user_id: request.principal!.user.id,
        agreed_by,
        asset_id: asset.id,
        asset_type: asset.asset_type,
        asset_version: asset.asset_version,
        eula_version: asset.eula_version,
        eula_checksum: asset.eula_checksum,
      }, audit);
      return { download_url: signDownloadLink(ctx, assetPath(asset.id, asset.file_name), ASSET_LINK_LIFETIME_MS) };
    },
  });
}

import type { Agreement, Asset, AssetRepository, NewAsset } from '../ports/index.js';
import type { AuditEntry } from '../../domain/audit.js';
import { audited } from './audit.js';
import type { Database } from './pool.js';

// The default of a type is its row with the highest seq, i.e. the one registered last.
const SELECT_ASSETS = `
  SELECT id, asset_type, asset_version, file_name, file_size, file_sha256, eula_version, eula_text, eula_checksum, registered,
         seq = (SELECT max(seq) FROM assets AS latest WHERE latest.asset_type = assets.asset_type) AS "default"
  FROM assets`;

const AGREEMENT_COLUMNS = 'agreed_at, customer_id, user_id, agreed_by, asset_id, asset_type, asset_version, eula_version, eula_checksum';

/** Assets and the EULA agreements given to download them. */
export class PgAssets implements AssetRepository {
  constructor(private readonly db: Database) {}

  async register(asset: NewAsset): Promise<boolean> {
    const result = await this.db.query(
      `INSERT INTO assets (id, asset_type, asset_version, file_name, file_size, file_sha256, eula_version, eula_text, eula_checksum, registered)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (asset_type, asset_version) DO NOTHING`,
      [asset.id, asset.asset_type, asset.asset_version, asset.file_name, asset.file_size, asset.file_sha256, asset.eula_version, asset.eula_text, asset.eula_checksum, asset.registered],
    );
    return result.rowCount === 1;
  }

  async list(assetType?: string): Promise<Asset[]> {
    return (await this.db.query<Asset>(`${SELECT_ASSETS} WHERE $1::text IS NULL OR asset_type = $1 ORDER BY asset_type, seq DESC`, [assetType ?? null])).rows;
  }

  async find(assetType: string, assetVersion?: string): Promise<Asset | undefined> {
    return (
      await this.db.query<Asset>(`${SELECT_ASSETS} WHERE asset_type = $1 AND ($2::text IS NULL OR asset_version = $2) ORDER BY seq DESC LIMIT 1`, [
        assetType,
        assetVersion ?? null,
      ])
    ).rows[0];
  }

  async exists(assetType: string, assetVersion: string): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM assets WHERE asset_type = $1 AND asset_version = $2', [assetType, assetVersion])).rowCount === 1;
  }

  async recordAgreement(agreement: Agreement, audit?: AuditEntry): Promise<void> {
    await audited(this.db, (client) => client.query(`INSERT INTO asset_agreements (${AGREEMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      agreement.agreed_at,
      agreement.customer_id,
      agreement.user_id,
      agreement.agreed_by,
      agreement.asset_id,
      agreement.asset_type,
      agreement.asset_version,
      agreement.eula_version,
      agreement.eula_checksum,
    ]), () => audit);
  }

  /** Agreements, oldest first, of every customer or of one. */
  async agreements(customerId?: string): Promise<Agreement[]> {
    return (
      await this.db.query<Agreement>(`SELECT ${AGREEMENT_COLUMNS} FROM asset_agreements WHERE $1::text IS NULL OR customer_id = $1 ORDER BY agreed_at, seq`, [
        customerId ?? null,
      ])
    ).rows;
  }
}

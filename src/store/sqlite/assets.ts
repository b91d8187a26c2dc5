import type { AuditEntry } from '../../domain/audit.js';
import type { Agreement, Asset, AssetRepository, NewAsset } from '../ports/index.js';
import { audited } from './audit.js';
import type { Db } from './open.js';

type AssetRow = Omit<Asset, 'default'> & { default: number };

// The default of a type is its row with the highest seq, i.e. the one registered last.
const SELECT_ASSETS = `
  SELECT id, asset_type, asset_version, file_name, file_size, file_sha256, eula_version, eula_text, eula_checksum, registered,
         seq = (SELECT max(seq) FROM assets AS latest WHERE latest.asset_type = assets.asset_type) AS "default"
  FROM assets`;

const toAsset = (row: AssetRow): Asset => ({ ...row, default: row.default === 1 });

/** Assets and the EULA agreements given to download them. */
export class SqliteAssets implements AssetRepository {
  constructor(private readonly db: Db) {}

  /** Records the asset; false when its type already has that version. */
  async register(asset: NewAsset): Promise<boolean> {
    const result = this.db
      .prepare(
        `INSERT INTO assets (id, asset_type, asset_version, file_name, file_size, file_sha256, eula_version, eula_text, eula_checksum, registered)
         VALUES (@id, @asset_type, @asset_version, @file_name, @file_size, @file_sha256, @eula_version, @eula_text, @eula_checksum, @registered)
         ON CONFLICT (asset_type, asset_version) DO NOTHING`,
      )
      .run(asset);
    return result.changes === 1;
  }

  /** All assets (or those of one type): by type, newest registration first. */
  async list(assetType?: string): Promise<Asset[]> {
    const rows = this.db
      .prepare(`${SELECT_ASSETS} WHERE @type IS NULL OR asset_type = @type ORDER BY asset_type, seq DESC`)
      .all({ type: assetType ?? null }) as AssetRow[];
    return rows.map(toAsset);
  }

  /** The asset of the type with that version, or the type's default when no version is given. */
  async find(assetType: string, assetVersion?: string): Promise<Asset | undefined> {
    const row = this.db
      .prepare(`${SELECT_ASSETS} WHERE asset_type = @type AND (@version IS NULL OR asset_version = @version) ORDER BY seq DESC LIMIT 1`)
      .get({ type: assetType, version: assetVersion ?? null }) as AssetRow | undefined;
    return row && toAsset(row);
  }

  async exists(assetType: string, assetVersion: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM assets WHERE asset_type = ? AND asset_version = ?').get(assetType, assetVersion) !== undefined;
  }

  async recordAgreement(agreement: Agreement, audit?: AuditEntry): Promise<void> {
    const insert = this.db.prepare(
      `INSERT INTO asset_agreements (agreed_at, customer_id, user_id, agreed_by, asset_id, asset_type, asset_version, eula_version, eula_checksum)
       VALUES (@agreed_at, @customer_id, @user_id, @agreed_by, @asset_id, @asset_type, @asset_version, @eula_version, @eula_checksum)`,
    );
    audited(this.db, () => insert.run(agreement), () => audit);
  }

  /** Agreements, oldest first, of every customer or of one. */
  async agreements(customerId?: string): Promise<Agreement[]> {
    return this.db
      .prepare(
        `SELECT agreed_at, customer_id, user_id, agreed_by, asset_id, asset_type, asset_version, eula_version, eula_checksum
         FROM asset_agreements WHERE @customer IS NULL OR customer_id = @customer ORDER BY agreed_at, seq`,
      )
      .all({ customer: customerId ?? null }) as Agreement[];
  }
}

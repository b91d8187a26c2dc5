import type { AssetType } from '../../domain/assets.js';
import type { AuditEntry } from '../../domain/audit.js';

/** A registered asset: a file of one type and version, governed by one EULA. Deployment-wide. */
export interface Asset {
  id: string;
  asset_type: AssetType;
  asset_version: string;
  file_name: string;
  file_size: number;
  /** SHA-256 of the file, lower-case hex (as sha256sum prints it). */
  file_sha256: string;
  eula_version: string;
  eula_text: string;
  /** SHA-256 of the EULA text, upper-case hex (docs/jobs-and-assets.md "Assets"). */
  eula_checksum: string;
  registered: number;
  /** The latest registered version of its type: what a download without asset_version gets. */
  default: boolean;
}

export type NewAsset = Omit<Asset, 'default'>;

/** Who agreed to which EULA to download which asset, and when. */
export interface Agreement {
  agreed_at: number;
  customer_id: string;
  user_id: string;
  agreed_by: string;
  asset_id: string;
  asset_type: string;
  asset_version: string;
  eula_version: string;
  eula_checksum: string;
}

/** Assets and the EULA agreements given to download them. */
export interface AssetRepository {
  /** False when the type and version are registered already. */
  register(asset: NewAsset): Promise<boolean>;
  /** All assets (or those of one type): by type, newest registration first. */
  list(assetType?: string): Promise<Asset[]>;
  /** The asset of the type with that version, or the type's default when no version is given. */
  find(assetType: string, assetVersion?: string): Promise<Asset | undefined>;
  exists(assetType: string, assetVersion: string): Promise<boolean>;
  recordAgreement(agreement: Agreement, audit?: AuditEntry): Promise<void>;
  /** Agreements, oldest first, of every customer or of one. */
  agreements(customerId?: string): Promise<Agreement[]>;
}

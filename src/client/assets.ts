import type { CustomerApi } from './api.js';

/** An item of `GET /{customer_id}/assets`: a version of a downloadable asset and its EULA. */
export interface AssetItem {
  asset_type: string;
  asset_version: string;
  default: boolean;
  file_name: string;
  file_size: number;
  file_sha256: string;
  eula_version: string;
  eula_checksum: string;
  eula_text: string;
  registered: number;
}

/** The agreement to an asset's EULA that a download link is given for (docs/jobs-and-assets.md "Assets"). */
export interface EulaAgreement {
  eula_version: string;
  eula_checksum: string;
  asset_type: string;
  agreed_by: string;
  asset_version: string;
}

/** The assets available for download, of one type or all. */
export async function listAssets(api: CustomerApi, assetType?: string): Promise<AssetItem[]> {
  return (await api.client.get<{ items: AssetItem[] }>(`${api.base}/assets`, { asset_type: assetType })).items;
}

/** Records the agreement and returns a signed link to the asset's file. */
export function generateDownloadUrl(api: CustomerApi, agreement: EulaAgreement): Promise<{ download_url: string }> {
  return api.client.post<{ download_url: string }>(`${api.base}/generate-download-url`, agreement);
}

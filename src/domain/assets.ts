import { createHash } from 'node:crypto';

/** The asset types a deployment serves (docs/jobs-and-assets.md "Assets"). */
export const ASSET_TYPES = ['CONNECT_ANDROID_APP', 'TRADE_FAIR_DEMO_APP', 'PLATFORM_MOBILE_APP', 'MARK_FIRMWARE'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

export function isAssetType(value: string): value is AssetType {
  return (ASSET_TYPES as readonly string[]).includes(value);
}

/** The `eula_checksum` of an EULA: SHA-256 of its text in UTF-8, upper-case hex. */
export function eulaChecksum(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').toUpperCase();
}

/** How long a download link of an asset is valid (docs/jobs-and-assets.md "Assets"). */
export const ASSET_LINK_LIFETIME_MS = 10 * 60 * 1000;

/** The data-directory path of an asset's file, as signed into its download link. */
export function assetPath(assetId: string, fileName: string): string {
  return `assets/${assetId}/${fileName}`;
}

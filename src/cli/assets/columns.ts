import type { AssetItem } from '../../client/assets.js';
import { formatTime, type Column, type Io } from '../io.js';

/** What an asset table shows: the API's items and the operator's registered assets alike. */
export type AssetRow = Pick<AssetItem, 'asset_type' | 'asset_version' | 'default' | 'file_name' | 'file_size' | 'eula_version' | 'registered'>;

/** The columns of asset tables (`assets list`, `operator assets list`). */
export const assetColumns = (io: Io): Column<AssetRow>[] => [
  { header: 'TYPE', value: (a) => a.asset_type },
  { header: 'VERSION', value: (a) => a.asset_version },
  { header: 'DEFAULT', value: (a) => (a.default ? 'yes' : 'no') },
  { header: 'FILE', value: (a) => a.file_name },
  { header: 'SIZE', value: (a) => a.file_size },
  { header: 'EULA', value: (a) => a.eula_version },
  { header: 'REGISTERED', value: (a) => formatTime(io, a.registered) },
];

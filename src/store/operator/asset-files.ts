import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { eulaChecksum, type AssetType } from '../../domain/assets.js';
import type { Asset, AssetRepository } from '../ports/index.js';

export interface AssetFile {
  assetType: AssetType;
  assetVersion: string;
  eulaVersion: string;
  eulaText: string;
  /** The file to register; its name is kept. */
  file: string;
}

/**
 * Copies the file into `<dataDir>/assets/<id>/<name>` (mode 0600), hashing it on the way, and
 * records the asset; it becomes the default of its type. Throws when the type already has that
 * version or the file cannot be read, leaving nothing behind.
 */
export async function registerAssetFile(store: AssetRepository, dataDir: string, asset: AssetFile, now: number): Promise<Asset> {
  const name = basename(asset.file);
  if (!statSync(asset.file).isFile()) throw new Error(`${asset.file} is not a regular file`);
  if (await store.exists(asset.assetType, asset.assetVersion)) {
    throw new Error(`${asset.assetType} ${asset.assetVersion} is already registered: register a new version`);
  }
  const id = randomUUID();
  const folder = join(dataDir, 'assets', id);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  try {
    const hash = createHash('sha256');
    let size = 0;
    const measure = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        hash.update(chunk);
        size += chunk.length;
        callback(null, chunk);
      },
    });
    await pipeline(createReadStream(asset.file), measure, createWriteStream(join(folder, name), { mode: 0o600, flags: 'wx' }));
    const record = {
      id,
      asset_type: asset.assetType,
      asset_version: asset.assetVersion,
      file_name: name,
      file_size: size,
      file_sha256: hash.digest('hex'),
      eula_version: asset.eulaVersion,
      eula_text: asset.eulaText,
      eula_checksum: eulaChecksum(asset.eulaText),
      registered: now,
    };
    // A concurrent registration of the same version may have won since the check above.
    if (!(await store.register(record))) throw new Error(`${asset.assetType} ${asset.assetVersion} is already registered: register a new version`);
    return (await store.find(asset.assetType, asset.assetVersion))!;
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}


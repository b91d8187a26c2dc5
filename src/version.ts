import { readFileSync } from 'node:fs';

/**
 * The version of this scanhub: package.json's, read from the package root (dist/ and src/ sit
 * beside it), so `--version`, the OpenAPI document and backups name the one installed.
 */
export const SCANHUB_VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import type { StoreLocator } from '../store/ports/index.js';
import { CliError, Exit } from './io.js';

/**
 * Where a deployment keeps what it knows (docs/postgresql.md): the SQLite file in `--data-dir`
 * (the default), or PostgreSQL with `--database URL`, whose secrets are encrypted under the master
 * key; files under `--blob-dir`. `serve` and every `operator` command take the same flags.
 */
export interface DeploymentOptions {
  dataDir: string;
  database?: string;
  masterKeyFile?: string;
  blobDir?: string;
}

/** What the flags resolve to. */
export interface Deployment {
  locator: StoreLocator;
  dataDir: string;
  /** Where export and asset files (and provisioning packages) live: shared by every instance. */
  blobDir: string;
}

const MASTER_KEY_BYTES = 32;

/** How to make a master key, for every refusal that lacks one. */
const MAKE_ONE = 'make one with `scanhub operator master-key` and pass it as SCANHUB_MASTER_KEY or in a file with --master-key-file';

/** Adds --database, --master-key-file and --blob-dir to a command that already has --data-dir. */
export function addDeploymentOptions(command: Command): Command {
  return command
    .addOption(new Option('--database <url>', 'PostgreSQL connection string (postgres://... or postgresql://...); default: SQLite in --data-dir').env('SCANHUB_DATABASE_URL'))
    .addOption(new Option('--master-key-file <file>', 'file holding the master key (base64 of 32 bytes) that encrypts the secrets in PostgreSQL; or SCANHUB_MASTER_KEY'))
    .addOption(new Option('--blob-dir <dir>', 'directory of export and asset files, shared by every instance (default: --data-dir)').env('SCANHUB_BLOB_DIR'));
}

/** Whether the connection string selects PostgreSQL (checked by its scheme only: node-postgres parses it). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url.trim());
}

/** A fresh master key: base64 of 32 random bytes. */
export function newMasterKey(): string {
  return randomBytes(MASTER_KEY_BYTES).toString('base64');
}

/** The master key from --master-key-file or SCANHUB_MASTER_KEY; refuses (exit 2) when absent or malformed. */
export function readMasterKey(file: string | undefined, env: NodeJS.ProcessEnv): Uint8Array {
  let text: string;
  let source: string;
  if (file) {
    source = `--master-key-file ${file}`;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new CliError(`cannot read the master key: ${(error as Error).message}`, Exit.USAGE);
    }
  } else if (env.SCANHUB_MASTER_KEY) {
    source = 'SCANHUB_MASTER_KEY';
    text = env.SCANHUB_MASTER_KEY;
  } else {
    throw new CliError(`PostgreSQL mode needs a master key to encrypt the secrets it stores: ${MAKE_ONE}.`, Exit.USAGE);
  }
  const trimmed = text.trim();
  const key = Buffer.from(trimmed, 'base64');
  if (key.length !== MASTER_KEY_BYTES || key.toString('base64') !== trimmed) {
    throw new CliError(`${source} is not a master key (base64 of ${MASTER_KEY_BYTES} bytes): ${MAKE_ONE}.`, Exit.USAGE);
  }
  return new Uint8Array(key);
}

/** Resolves the flags to a store locator and the file directories. */
export function resolveDeployment(options: DeploymentOptions, env: NodeJS.ProcessEnv = process.env): Deployment {
  const dataDir = resolve(options.dataDir);
  const blobDir = resolve(options.blobDir ?? dataDir);
  const database = options.database?.trim();
  if (!database) return { locator: { kind: 'sqlite', file: join(dataDir, 'scanhub.db'), dataDir }, dataDir, blobDir };
  if (!isPostgresUrl(database)) {
    throw new CliError(`--database: "${database}" is not a PostgreSQL connection string (postgres://... or postgresql://...).`, Exit.USAGE);
  }
  return { locator: { kind: 'postgres', url: database, masterKey: readMasterKey(options.masterKeyFile, env) }, dataDir, blobDir };
}

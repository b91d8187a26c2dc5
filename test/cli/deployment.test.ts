import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPostgresUrl, newMasterKey, readMasterKey, resolveDeployment } from '../../src/cli/deployment.js';
import { CliError } from '../../src/cli/io.js';

const KEY = Buffer.alloc(32, 7).toString('base64');

function refusal(run: () => unknown): { message: string; exitCode: number } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return { message: (error as CliError).message, exitCode: (error as CliError).exitCode };
  }
  throw new Error('expected a refusal');
}

describe('deployment options', () => {
  it('defaults to the SQLite file in the data directory, files beside it', () => {
    expect(resolveDeployment({ dataDir: 'd' }, {})).toEqual({
      locator: { kind: 'sqlite', file: join(resolve('d'), 'scanhub.db'), dataDir: resolve('d') },
      dataDir: resolve('d'),
      blobDir: resolve('d'),
    });
    expect(resolveDeployment({ dataDir: 'd', blobDir: '/shared/blobs' }, {}).blobDir).toBe('/shared/blobs');
  });

  it('selects PostgreSQL by scheme, keeping unix-socket strings that new URL() would refuse', () => {
    const url = 'postgresql://postgres@/scanhub?host=/run/pg dir';
    const deployment = resolveDeployment({ dataDir: 'd', database: url }, { SCANHUB_MASTER_KEY: KEY });
    expect(deployment.locator).toEqual({ kind: 'postgres', url, masterKey: new Uint8Array(Buffer.alloc(32, 7)) });
    expect(isPostgresUrl('postgres://u@h/db')).toBe(true);
    expect(isPostgresUrl('mysql://u@h/db')).toBe(false);
  });

  it('refuses PostgreSQL without a master key, saying how to make one (exit 2)', () => {
    expect(refusal(() => resolveDeployment({ dataDir: 'd', database: 'postgres://u@h/db' }, {}))).toEqual({
      message:
        'PostgreSQL mode needs a master key to encrypt the secrets it stores: make one with `scanhub operator master-key` and pass it as SCANHUB_MASTER_KEY or in a file with --master-key-file.',
      exitCode: 2,
    });
  });

  it('refuses a key that is not base64 of 32 bytes, and a connection string of another database', () => {
    expect(refusal(() => readMasterKey(undefined, { SCANHUB_MASTER_KEY: 'c2hvcnQ=' })).message).toMatch(/^SCANHUB_MASTER_KEY is not a master key \(base64 of 32 bytes\)/);
    expect(refusal(() => resolveDeployment({ dataDir: 'd', database: 'mysql://x' }, { SCANHUB_MASTER_KEY: KEY })).exitCode).toBe(2);
  });

  it('reads the key from --master-key-file before the environment; new keys are 32 random bytes', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'scanhub-key-')), 'master.key');
    const key = newMasterKey();
    writeFileSync(file, `${key}\n`);
    expect(Buffer.from(readMasterKey(file, { SCANHUB_MASTER_KEY: KEY })).toString('base64')).toBe(key);
    expect(Buffer.from(key, 'base64').length).toBe(32);
    expect(newMasterKey()).not.toBe(key);
  });
});

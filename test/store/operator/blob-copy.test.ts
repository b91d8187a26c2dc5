import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyBlobFiles, planBlobCopy, removeFiles } from '../../../src/store/operator/blob-copy.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory with an export, an asset in its folder, a package, and a file outside the blob folders. */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-blobs-'));
  dirs.push(dir);
  for (const [file, text] of [
    ['exports/task-1.csv', 'id,class\n'],
    ['assets/a1/app.apk', 'PK'],
    ['packages/p1.json', '{}'],
    ['keys/links.key', 'secret'],
  ]) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

describe('the blob files of a migration', () => {
  it('stay where they are when the blob directory is the data directory', async () => {
    const dir = dataDir();
    expect(await planBlobCopy(dir, dir)).toEqual({ kind: 'kept', dir });
  });

  it('are copied (files only of exports/, assets/, packages/; mode 0600), and removed again on request', async () => {
    const from = dataDir();
    const to = join(from, '..', `${from.split('/').pop()}-blobs`);
    dirs.push(to);
    const plan = await planBlobCopy(from, to);
    expect(plan).toEqual({ kind: 'copy', from, to, files: ['exports/task-1.csv', 'assets/a1/app.apk', 'packages/p1.json'], present: 0, conflicts: [] });
    const made: string[] = [];
    await copyBlobFiles(plan, made);
    expect(made).toEqual([join(to, 'exports/task-1.csv'), join(to, 'assets/a1/app.apk'), join(to, 'packages/p1.json')]);
    expect(readFileSync(join(to, 'assets/a1/app.apk'), 'utf8')).toBe('PK');
    expect(statSync(join(to, 'exports/task-1.csv')).mode & 0o777).toBe(0o600);
    expect(readdirSync(to).sort()).toEqual(['assets', 'exports', 'packages']);
    await removeFiles(made);
    expect(made).toEqual([]);
    expect(readdirSync(join(to, 'exports'))).toEqual([]);
  });

  it('counts files already there with the same content, and names those with other content', async () => {
    const from = dataDir();
    const to = mkdtempSync(join(tmpdir(), 'scanhub-blobs-to-'));
    dirs.push(to);
    mkdirSync(join(to, 'exports'));
    mkdirSync(join(to, 'packages'));
    writeFileSync(join(to, 'exports/task-1.csv'), 'id,class\n');
    writeFileSync(join(to, 'packages/p1.json'), '{"other":1}');
    expect(await planBlobCopy(from, to)).toEqual({ kind: 'copy', from, to, files: ['assets/a1/app.apk'], present: 1, conflicts: ['packages/p1.json'] });
  });
});

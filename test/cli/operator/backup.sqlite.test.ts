import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { MqttClient } from 'mqtt';
import { list as listTar, extract as extractTar } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../../src/client/api.js';
import { ArchiveWriter } from '../../../src/store/operator/backup-archive.js';
import { BIN, runCli, type CliResult } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { connectGateway, provisionGateway, type TestGateway } from '../../helpers/mqtt.js';
import { describePostgres, freshDatabase } from '../../helpers/postgres.js';
import { serveOnFreePorts, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { TEST_MASTER_KEY } from '../../helpers/test-store.js';

/**
 * `scanhub operator backup` and `restore` (DESIGN.md "Operations on one box", docs/backup.md), as
 * an operator runs them: a real `serve` process whose gateways publish over MQTT with TLS while
 * the backup CLI process copies the deployment; the file restored by the CLI into a new data
 * directory, served on other ports, where the administrator logs in with the same password and a
 * gateway's old certificate connects and publishes. Then every refusal, with its message and exit
 * code, and nothing written where it refused.
 */

const FIRST_START = { SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD, SCANHUB_ADMIN_EMAIL: ADMIN_EMAIL, SCANHUB_CUSTOMER_ID: CUSTOMER };
/** Events written into the database before the backup: a database of a few MB, larger than the small disks below. */
const SEEDED_EVENTS = 10_000;

let root: string;
let dataDir: string;
let backupFile: string;
const running: ServeProcess[] = [];

afterAll(async () => {
  await Promise.all(running.splice(0).map(stop));
  if (root) rmSync(root, { recursive: true, force: true });
});

const serve = (args: string[], env: Record<string, string> = {}) => serveOnFreePorts(running, args, env);

const operator = (args: string[], env?: NodeJS.ProcessEnv) => runCli(['operator', ...args], { env });
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;
/** The entries of a folder, hidden ones included, sorted. */
const entries = (dir: string) => readdirSync(dir).sort();

/** A gateway publishing QoS 1 events one after another until stopped; ids sent, and ids acknowledged (PUBACK) in order. */
class Publisher {
  readonly sent: string[] = [];
  readonly acked: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly client: MqttClient,
    private readonly topic: string,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const id = randomUUID();
      this.sent.push(id);
      await this.client.publishAsync(this.topic, JSON.stringify({ id, type: 'scan', created: Date.now(), scan_code: 'BACKUP-LOAD' }), { qos: 1 });
      this.acked.push(id);
    }
  }

  /** Resolves once `count` more events have been acknowledged. */
  async ackedMore(count: number): Promise<void> {
    const target = this.acked.length + count;
    while (this.acked.length < target) await new Promise((resolve) => setImmediate(resolve));
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** The event ids stored in a data directory's database. */
function storedIds(dir: string): Set<string> {
  const db = new Database(join(dir, 'scanhub.db'), { readonly: true });
  try {
    return new Set(db.prepare("SELECT id FROM events WHERE id NOT LIKE 'seed-%'").pluck().all() as string[]);
  } finally {
    db.close();
  }
}

/** The paths of a tar file's entries, in order. */
async function tarPaths(file: string): Promise<string[]> {
  const paths: string[] = [];
  await listTar({ file, onReadEntry: (entry) => paths.push(entry.path) });
  return paths;
}

/** The manifest.json of a backup file. */
async function manifestOf(file: string): Promise<{ files: { path: string; size: number; sha256: string }[]; [field: string]: unknown }> {
  const dir = mkdtempSync(join(root, 'manifest-'));
  await extractTar({ file, cwd: dir }, ['manifest.json']);
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
}

/** The byte offset of an entry's content in a tar file this scanhub wrote (its ustar header names it). */
function contentOffset(tar: Buffer, path: string): number {
  for (let at = 0; at + 512 <= tar.length; at += 512) {
    if (tar.subarray(at, at + 100).toString('latin1').replace(/\0.*$/s, '') === path && tar.subarray(at + 257, at + 262).toString() === 'ustar') return at + 512;
  }
  throw new Error(`${path} is not in the archive`);
}

/**
 * `scanhub operator --data-dir D backup ...args` as its own process; `snapshotTaken` resolves
 * once it says it copies the database (its snapshot is then fixed), `exited` with its result.
 */
function spawnBackup(args: string[]): { child: ChildProcess; snapshotTaken: Promise<void>; exited: Promise<CliResult> } {
  const child = spawn(process.execPath, [BIN, 'operator', '--data-dir', dataDir, 'backup', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const snapshotTaken = new Promise<void>((resolve) =>
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('copying the database')) resolve();
    }),
  );
  const exited = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, snapshotTaken, exited };
}

/** A fresh folder under the test's root. */
const folder = (name: string) => mkdtempSync(join(root, `${name}-`));

/** The scanhub.db of the backup file. */
async function databaseOf(): Promise<Buffer> {
  const dir = folder('db');
  await extractTar({ file: backupFile, cwd: dir }, ['scanhub.db']);
  return readFileSync(join(dir, 'scanhub.db'));
}

/**
 * Runs the CLI in a mount namespace of its own in which `dir` is a tmpfs of `size` (a small, full
 * disk, or a volume of its own), as root or as a user mapped to root, after the shell commands
 * `setup` (`$dir` is the mounted folder); with the entries left in `dir` after it exited.
 */
function runCliOnSmallDisk(dir: string, size: string, args: string[], setup = ''): Promise<CliResult & { left: string[] }> {
  const script = `mount -t tmpfs -o size=${size} tmpfs "$1" || exit 99; dir="$1"; shift; ${setup} "$@"; code=$?; printf '\\nLEFT:%s\\n' "$(ls -A "$dir" | tr '\\n' ' ')" >&2; exit $code`;
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['--mount', '--map-root-user', 'sh', '-c', script, 'sh', dir, process.execPath, BIN, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const match = /\nLEFT:(.*)\n$/.exec(stderr);
      if (!match) return reject(new Error(`no listing of ${dir} (exit ${code}): ${stderr}`));
      resolve({ code, stdout, stderr: stderr.slice(0, match.index).replace(/\n$/, ''), left: match[1]!.split(' ').filter(Boolean) });
    });
  });
}

interface Seen {
  s1: Awaited<ReturnType<typeof serve>>;
  g1: TestGateway;
  g2: TestGateway;
  asset: Buffer;
  packageUrl: string;
  packageText: string;
  ackedBefore: string[];
  sentByG1: string[];
  ackedDuringStop: string[];
  ackedByG1DuringBackup: number;
  backup: CliResult;
}
let seen: Seen;

describe('scanhub operator backup and restore (SQLite)', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'scanhub-backup-'));
    dataDir = join(root, 'data');
    backupFile = join(root, 'backup.tar');
    const s1 = await serve(['--data-dir', dataDir], FIRST_START);
    const anonymous = new ApiClient(s1.url);
    const adminToken = (await anonymous.post<{ id_token: string }>('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).id_token;
    const admin = new ApiClient(s1.url, adminToken);
    const g1 = await provisionGateway({ admin, anonymous }, { name: 'dock-1' });
    const g2 = await provisionGateway({ admin, anonymous }, { name: 'dock-2' });

    // An asset file and a provisioning package: files of the blob folders.
    const assetFile = join(root, 'connect.apk');
    const eulaFile = join(root, 'eula.txt');
    const asset = Buffer.from([0x50, 0x4b, 3, 4, 0, 0xff, 7]);
    writeFileSync(assetFile, asset);
    writeFileSync(eulaFile, 'Use it well.\n');
    const added = await operator(['--data-dir', dataDir, 'assets', 'add', '--type', 'CONNECT_ANDROID_APP', '--version', '1.0.0', '--eula-version', '1', '--eula-file', eulaFile, assetFile]);
    expect(added.code).toBe(0);
    const { gateways } = await admin.post<{ gateways: { package_url: string }[] }>(`/${CUSTOMER}/create-provisioning-package`, { gateways: [{ gateway_name: 'boxed-1' }] });
    const packageUrl = gateways[0]!.package_url;
    const packageText = (await call(packageUrl, 'GET', '')).text;

    // Seeded events (written straight into the live database: WAL and the busy timeout let it).
    const db = new Database(join(dataDir, 'scanhub.db'));
    db.pragma('busy_timeout = 5000');
    db.prepare(
      `INSERT INTO events (id, customer_id, class, type, created, scan_code, gateway_id)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?)
       SELECT 'seed-' || i, ?, 'event', 'scan', ? + i, 'SEEDED-' || i, ? FROM n`,
    ).run(SEEDED_EVENTS, CUSTOMER, Date.now() - 3_600_000, g1.id);
    db.close();

    const publisher = new Publisher(await connectGateway(g1), g1.topic);
    const quiet = await connectGateway(g2);
    await publisher.ackedMore(20);
    const ackedBefore = [...publisher.acked];

    // The backup as its own process. Once it says it copies the database its snapshot is fixed:
    // it is stopped there (SIGSTOP) while the other gateway publishes, then let go.
    const { child, snapshotTaken, exited } = spawnBackup(['--output', backupFile]);
    await snapshotTaken;
    child.kill('SIGSTOP');
    const ackedAtStop = publisher.acked.length;
    const ackedDuringStop: string[] = [];
    for (let i = 0; i < 10; i++) {
      const id = randomUUID();
      await quiet.publishAsync(g2.topic, JSON.stringify({ id, type: 'scan', created: Date.now(), scan_code: 'WHILE-STOPPED' }), { qos: 1 });
      ackedDuringStop.push(id);
    }
    await publisher.ackedMore(10);
    const ackedByG1DuringBackup = publisher.acked.length - ackedAtStop;
    child.kill('SIGCONT');
    const backup = await exited;
    await publisher.stop();
    await quiet.endAsync();
    seen = {
      s1,
      g1,
      g2,
      asset,
      packageUrl,
      packageText,
      ackedBefore,
      sentByG1: publisher.sent,
      ackedDuringStop,
      ackedByG1DuringBackup,
      backup,
    };
  }, 120_000);

  it('writes one tar file while serve ingests: the database, keys, CA, server certificate, asset and package files, and the manifest last', async () => {
    const { backup } = seen;
    expect(backup.code).toBe(0);
    expect(backup.stdout).toBe('');
    const lines = backup.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^Backing up ${dataDir}: copying the database \\(\\d+\\.\\d MB\\) as of now; ingest goes on meanwhile\\.\\.\\.$`));
    expect(lines[1]).toMatch(
      new RegExp(`^Backed up ${dataDir} to ${backupFile} in \\d+\\.\\d s: scanhub\\.db \\(\\d+\\.\\d MB\\) and 8 files, SHA-256 sums in its manifest\\.json\\.$`),
    );
    expect(mode(backupFile)).toBe(0o600);
    // No temporary file is left beside it.
    expect(entries(root).filter((name) => name.startsWith('.'))).toEqual([]);

    const [assetId] = readdirSync(join(dataDir, 'assets'));
    const [packageName] = readdirSync(join(dataDir, 'packages'));
    expect(await tarPaths(backupFile)).toEqual([
      'scanhub.db',
      'keys/idtoken.jwk',
      'keys/links.key',
      'pki/ca.crt',
      'pki/ca.key',
      'pki/server.crt',
      'pki/server.key',
      `assets/${assetId}/connect.apk`,
      `packages/${packageName}`,
      'manifest.json',
    ]);
    // The database inside is one self-contained file: rollback journal (header bytes 18 and 19 are 1), not WAL (2).
    const database = await databaseOf();
    expect([database[18], database[19]]).toEqual([1, 1]);
    const manifest = await manifestOf(backupFile);
    expect(manifest.files[0]).toEqual({ path: 'scanhub.db', size: database.length, sha256: sha256(database) });
    expect(Object.keys(manifest)).toEqual(['format', 'version', 'created', 'scanhub_version', 'sqlite_version', 'data_dir', 'files']);
    expect(manifest).toMatchObject({ format: 'scanhub-backup', version: 1, scanhub_version: '0.1.0', data_dir: dataDir });
    expect(manifest.files.map((f) => f.path)).toEqual((await tarPaths(backupFile)).slice(0, -1));
    // The sums are those of the files (the database's is checked by the restore below).
    for (const path of ['keys/links.key', 'pki/ca.key', `assets/${assetId}/connect.apk`]) {
      const content = readFileSync(join(dataDir, path));
      expect(manifest.files.find((f) => f.path === path)).toEqual({ path, size: content.length, sha256: sha256(content) });
    }
  });

  it('keeps ingest acknowledging once the backup has taken its snapshot', () => {
    // While the backup process stood stopped after taking its snapshot, both gateways went on
    // being acknowledged (how many per second during a long copy: bench/backup.bench.js).
    expect(seen.ackedDuringStop).toHaveLength(10);
    expect(seen.ackedByG1DuringBackup).toBeGreaterThanOrEqual(10);
  });

  it('restores into a new directory: sums and integrity checked, modes as serve makes them, the events of the snapshot', async () => {
    const restored = join(root, 'restored');
    const result = await operator(['--data-dir', restored, 'restore', backupFile]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const manifest = await manifestOf(backupFile);
    expect(result.stderr).toBe(
      `Restored ${backupFile} (taken ${manifest.created as string} by scanhub 0.1.0) into ${restored}: scanhub.db (${((manifest.files[0]!.size) / 1e6).toFixed(1)} MB) and 8 files, every SHA-256 sum and PRAGMA integrity_check verified. Start it with \`scanhub serve --data-dir ${restored}\`.\n`,
    );
    expect(mode(restored)).toBe(0o700);
    expect(entries(restored)).toEqual(['assets', 'keys', 'packages', 'pki', 'scanhub.db']);
    expect(mode(join(restored, 'scanhub.db'))).toBe(0o600);
    expect(mode(join(restored, 'keys'))).toBe(0o700);
    for (const path of ['keys/idtoken.jwk', 'keys/links.key', 'pki/ca.key', 'pki/ca.crt', 'pki/server.key']) {
      expect(mode(join(restored, path))).toBe(0o600);
      expect(readFileSync(join(restored, path))).toEqual(readFileSync(join(dataDir, path)));
    }
    // Nothing of the restore is left beside it.
    expect(entries(root).filter((name) => name.startsWith('.'))).toEqual([]);

    // The snapshot: every event acknowledged before the backup began, none of those acknowledged
    // while it was stopped after its snapshot, nothing that was never sent.
    const ids = storedIds(restored);
    for (const id of seen.ackedBefore) expect(ids.has(id)).toBe(true);
    for (const id of seen.ackedDuringStop) expect(ids.has(id)).toBe(false);
    const sent = new Set(seen.sentByG1);
    expect([...ids].filter((id) => !sent.has(id))).toEqual([]);
    const db = new Database(join(restored, 'scanhub.db'), { readonly: true });
    expect(db.prepare("SELECT count(*) FROM events WHERE id LIKE 'seed-%'").pluck().get()).toBe(SEEDED_EVENTS);
    db.close();
  });

  it('serves the restored directory: the same password logs in, an old gateway certificate connects and publishes, files download', async () => {
    const restored = join(root, 'restored');
    const s2 = await serve(['--data-dir', restored]);
    // No password printed: the restored deployment has its administrator already.
    expect(s2.process.stderr()).not.toMatch(/password/i);
    const login = await call(s2.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(login.status).toBe(200);
    const token = (login.body as { id_token: string }).id_token;

    const before = storedIds(restored).size;
    const gateway = { ...seen.g1, endpoint: seen.g1.endpoint.replace(/:\d+$/, `:${s2.mqttPort}`) };
    const client = await connectGateway(gateway);
    const id = randomUUID();
    await client.publishAsync(gateway.topic, JSON.stringify({ id, type: 'scan', created: Date.now(), scan_code: 'AFTER-RESTORE' }), { qos: 1 });
    await client.endAsync();
    const event = await call(s2.url, 'GET', `/${CUSTOMER}/events?gateway_id=${seen.g1.id}&limit=1`, { token });
    expect(event.status).toBe(200);
    expect((event.body as { items: { id: string; scan_code: string }[] }).items[0]).toMatchObject({ id, scan_code: 'AFTER-RESTORE' });
    expect(storedIds(restored).size).toBe(before + 1);

    // The asset file, and the package link signed by the old deployment's link key.
    const { download_url } = (
      await call(s2.url, 'POST', `/${CUSTOMER}/generate-download-url`, {
        token,
        json: { eula_version: '1', asset_type: 'CONNECT_ANDROID_APP', agreed_by: ADMIN_EMAIL },
      })
    ).body as { download_url: string };
    expect(Buffer.from(await (await fetch(download_url)).arrayBuffer())).toEqual(seen.asset);
    const oldLink = new URL(seen.packageUrl);
    const packageAnswer = await call(s2.url, 'GET', oldLink.pathname + oldLink.search);
    expect(packageAnswer.status).toBe(200);
    expect(packageAnswer.text).toBe(seen.packageText);
    expect(await stop(s2.process)).toEqual({ code: 0, signal: null });
  });

  it('refuses a data directory that a running serve holds, even with --force (exit 2), and leaves it alone', async () => {
    const before = entries(dataDir);
    const result = await operator(['--data-dir', dataDir, 'restore', '--force', backupFile]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: the data directory ${dataDir} is in use by scanhub serve (pid ${seen.s1.process.child.pid}): stop it first, restore never replaces a data directory that a running serve holds\n`,
    });
    expect(entries(dataDir)).toEqual(before);
    expect(entries(root).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('refuses a directory that is not empty without --force (exit 2); with --force replaces it; an empty one it fills', async () => {
    const target = folder('occupied');
    writeFileSync(join(target, 'notes.txt'), 'mine');
    const refused = await operator(['--data-dir', target, 'restore', backupFile]);
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: the data directory ${target} is not empty: restore into a new or empty directory, or pass --force to replace what it holds\n`,
    });
    expect(entries(target)).toEqual(['notes.txt']);

    const forced = await operator(['--data-dir', target, 'restore', '--force', backupFile]);
    expect(forced.code).toBe(0);
    expect(entries(target)).toEqual(['assets', 'keys', 'packages', 'pki', 'scanhub.db']);
    expect(mode(target)).toBe(0o700);

    const empty = folder('empty');
    chmodSync(empty, 0o755);
    const filled = await operator(['--data-dir', empty, 'restore', backupFile]);
    expect(filled.code).toBe(0);
    expect(entries(empty)).toEqual(['assets', 'keys', 'packages', 'pki', 'scanhub.db']);
    expect(mode(empty)).toBe(0o700);
    expect(entries(root).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  describe('a damaged or wrong backup file: exit 1, nothing written to the data directory', () => {
    /** Restores `file` into a new directory of a new folder, which must hold nothing afterwards; the result and the directory. */
    async function refusedRestore(file: string): Promise<{ result: CliResult; target: string }> {
      const parent = folder('target');
      const target = join(parent, 'data');
      const result = await operator(['--data-dir', target, 'restore', file]);
      expect(entries(parent)).toEqual([]);
      return { result, target };
    }

    /** A copy of the backup file changed by `change`. */
    function changedCopy(name: string, change: (tar: Buffer) => Buffer): string {
      const file = join(folder('changed'), name);
      writeFileSync(file, change(readFileSync(backupFile)));
      return file;
    }

    /** A backup file of `files` (path and content) with a manifest that lists them truly. */
    async function craftedBackup(name: string, files: [string, Buffer][]): Promise<string> {
      const file = join(folder('crafted'), name);
      const writer = await ArchiveWriter.create(file);
      const listed = [];
      for (const [path, data] of files) listed.push(await writer.addBuffer(path, data));
      const manifest = { ...(await manifestOf(backupFile)), files: listed };
      await writer.addBuffer('manifest.json', Buffer.from(JSON.stringify(manifest)));
      await writer.finish();
      return file;
    }

    it('a file whose content does not match its SHA-256', async () => {
      const file = changedCopy('bad-sum.tar', (tar) => {
        tar[contentOffset(tar, 'keys/links.key') + 3] ^= 0x01;
        return tar;
      });
      const { result, target } = await refusedRestore(file);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${file}: its keys/links.key does not match the SHA-256 in the manifest; nothing was written to ${target}\n`,
      });
    });

    it('a truncated file', async () => {
      const file = changedCopy('truncated.tar', (tar) => tar.subarray(0, contentOffset(tar, 'scanhub.db') + 8192));
      const { result, target } = await refusedRestore(file);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(
        new RegExp(`^scanhub: cannot restore ${file}: it ends too early, so it is incomplete \\(Truncated input \\(needed \\d+ more bytes, only 0 available\\)\\); nothing was written to ${target}\\n$`),
      );
    });

    it('a file cut before its manifest', async () => {
      const file = changedCopy('no-manifest.tar', (tar) => tar.subarray(0, contentOffset(tar, 'manifest.json') - 512));
      const { result, target } = await refusedRestore(file);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${file}: it has no manifest.json, so it is incomplete or not a scanhub backup; nothing was written to ${target}\n`,
      });
    });

    it('a file that is no tar file at all', async () => {
      const file = join(folder('junk'), 'junk.tar');
      writeFileSync(file, 'x'.repeat(4096));
      const { result, target } = await refusedRestore(file);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${file}: it is not a scanhub backup, not even a tar file (checksum failure); nothing was written to ${target}\n`,
      });
    });

    it('a database that fails PRAGMA integrity_check, though its sums match', async () => {
      const database = await databaseOf();
      // Page 2 onwards scrambled: the b-tree pages no longer say what page 1's schema says.
      for (let at = 4096; at < Math.min(database.length, 4096 * 40); at += 97) database[at] ^= 0x5a;
      const file = await craftedBackup('corrupt-db.tar', [['scanhub.db', database]]);
      const { result, target } = await refusedRestore(file);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^scanhub: cannot restore ${file}: its scanhub\\.db fails PRAGMA integrity_check: .+; nothing was written to ${target}\\n$`));
    });

    it('a file outside the folders of a data directory, such as ../escape', async () => {
      const file = await craftedBackup('escape.tar', [
        ['scanhub.db', await databaseOf()],
        ['keys/../../escape', Buffer.from('out')],
      ]);
      const { result, target } = await refusedRestore(file);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${file}: it holds "keys/../../escape", which is no file of a scanhub data directory; nothing was written to ${target}\n`,
      });
      expect(existsSync(join(target, '..', '..', 'escape'))).toBe(false);
    });

    it('a file its manifest does not list, and one it lists but lacks', async () => {
      const database = await databaseOf();
      const unlisted = join(folder('unlisted'), 'unlisted.tar');
      const writer = await ArchiveWriter.create(unlisted);
      const db = await writer.addBuffer('scanhub.db', database);
      await writer.addBuffer('keys/extra.key', Buffer.from('extra'));
      const manifest = await manifestOf(backupFile);
      await writer.addBuffer('manifest.json', Buffer.from(JSON.stringify({ ...manifest, files: [db] })));
      await writer.finish();
      const first = await refusedRestore(unlisted);
      expect(first.result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${unlisted}: it holds keys/extra.key, which its manifest does not list; nothing was written to ${first.target}\n`,
      });

      const lacking = join(folder('lacking'), 'lacking.tar');
      const other = await ArchiveWriter.create(lacking);
      await other.addBuffer('scanhub.db', database);
      await other.addBuffer('manifest.json', Buffer.from(JSON.stringify({ ...manifest, files: [db, { path: 'pki/ca.key', size: 5, sha256: sha256(Buffer.from('ca-ky')) }] })));
      await other.finish();
      const second = await refusedRestore(lacking);
      expect(second.result).toEqual({
        code: 1,
        stdout: '',
        stderr: `scanhub: cannot restore ${lacking}: "pki/ca.key" is listed in its manifest but missing from it; nothing was written to ${second.target}\n`,
      });
    });

    it('a file that holds one path twice', async () => {
      const database = await databaseOf();
      const file = join(folder('twice'), 'twice.tar');
      const writer = await ArchiveWriter.create(file);
      const db = await writer.addBuffer('scanhub.db', database);
      await writer.addBuffer('scanhub.db', database);
      await writer.addBuffer('manifest.json', Buffer.from(JSON.stringify({ ...(await manifestOf(backupFile)), files: [db] })));
      await writer.finish();
      const { result, target } = await refusedRestore(file);
      expect(result).toEqual({ code: 1, stdout: '', stderr: `scanhub: cannot restore ${file}: it holds scanhub.db twice; nothing was written to ${target}\n` });
    });

    it('a backup file that does not exist: exit 2', async () => {
      const missing = join(root, 'no-such-backup.tar');
      const { result } = await refusedRestore(missing);
      expect(result).toEqual({ code: 2, stdout: '', stderr: `scanhub: no backup file ${missing}\n` });
    });
  });

  it('cancelled by SIGINT: exit 2, no file and no temporary file left', async () => {
    const out = folder('cancelled');
    const { child, snapshotTaken, exited } = spawnBackup(['-o', join(out, 'b.tar')]);
    await snapshotTaken;
    // Stopped first, so that the signal is there before it can have finished.
    child.kill('SIGSTOP');
    child.kill('SIGINT');
    child.kill('SIGCONT');
    const result = await exited;
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n').slice(1).join('\n')).toBe('scanhub: cancelled: no backup was written\n');
    expect(entries(out)).toEqual([]);
  });

  it('refuses an existing output without --force, and a data directory without a database (exit 2)', async () => {
    const exists = await operator(['--data-dir', dataDir, 'backup', '--output', backupFile]);
    expect(exists).toEqual({ code: 2, stdout: '', stderr: `scanhub: ${backupFile} exists: pass --force to overwrite it or -o for another file\n` });
    const empty = folder('no-db');
    const none = await operator(['--data-dir', empty, 'backup', '--output', join(empty, 'b.tar')]);
    expect(none).toEqual({ code: 2, stdout: '', stderr: `scanhub: no scanhub database in ${empty} (no scanhub.db): give --data-dir of the deployment to back up\n` });
    expect(entries(empty)).toEqual([]);
    // Into the data directory (with --force it would even replace the database).
    const before = entries(dataDir);
    const inside = await operator(['--data-dir', dataDir, 'backup', '--force', '--output', join(dataDir, 'scanhub.db')]);
    expect(inside).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: the backup file ${join(dataDir, 'scanhub.db')} would be inside ${dataDir}, which it backs up: write it elsewhere (a backup kept with what it backs up is lost with it)\n`,
    });
    expect(entries(dataDir)).toEqual(before);
  });

  it('refuses a target that is a file, and a backup file inside the directory it would replace (exit 2)', async () => {
    const plain = join(folder('plain'), 'file');
    writeFileSync(plain, 'not a directory');
    expect(await operator(['--data-dir', plain, 'restore', backupFile])).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: ${plain} is not a directory: give --data-dir a new or empty directory\n`,
    });
    const target = folder('holds-backup');
    const file = join(target, 'backup.tar');
    copyFileSync(backupFile, file);
    expect(await operator(['--data-dir', target, 'restore', '--force', file])).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: the backup file ${file} is inside ${target}, which the restore replaces: move it elsewhere first\n`,
    });
    expect(entries(target)).toEqual(['backup.tar']);
  });

  it('with --blob-dir: asset files and packages come from there, and are restored to the --blob-dir given', async () => {
    // A deployment whose blob folders live elsewhere: the restored one, its files moved out.
    const deployment = join(folder('split'), 'data');
    expect((await operator(['--data-dir', deployment, 'restore', backupFile])).code).toBe(0);
    const blobs = folder('blobs');
    for (const name of ['assets', 'packages']) renameSync(join(deployment, name), join(blobs, name));
    const file = join(root, 'split.tar');
    const backup = await operator(['--data-dir', deployment, '--blob-dir', blobs, '--json', 'backup', '-o', file]);
    expect(backup.code).toBe(0);
    // --json: the manifest on stdout.
    expect(JSON.parse(backup.stdout)).toEqual(await manifestOf(file));
    expect((await tarPaths(file)).filter((path) => /^(assets|packages)\//.test(path))).toEqual(
      (await tarPaths(backupFile)).filter((path) => /^(assets|packages)\//.test(path)),
    );

    const target = join(folder('split-restore'), 'data');
    const otherBlobs = folder('other-blobs');
    const restored = await operator(['--data-dir', target, '--blob-dir', otherBlobs, 'restore', file]);
    expect(restored.code).toBe(0);
    expect(restored.stderr).toContain(`Start it with \`scanhub serve --data-dir ${target} --blob-dir ${otherBlobs}\`.`);
    expect(entries(target)).toEqual(['keys', 'pki', 'scanhub.db']);
    expect(entries(otherBlobs)).toEqual(['assets', 'packages']);
    const [assetId] = readdirSync(join(otherBlobs, 'assets'));
    expect(readFileSync(join(otherBlobs, 'assets', assetId!, 'connect.apk'))).toEqual(seen.asset);

    // A blob directory holding another file of the same name: refused before anything is written.
    const clashing = folder('clashing');
    mkdirSync(join(clashing, 'assets', assetId!), { recursive: true });
    writeFileSync(join(clashing, 'assets', assetId!, 'connect.apk'), 'another file');
    const clashTarget = join(folder('clash-restore'), 'data');
    const clash = await operator(['--data-dir', clashTarget, '--blob-dir', clashing, 'restore', file]);
    expect(clash).toEqual({
      code: 2,
      stdout: '',
      stderr: `scanhub: --blob-dir ${clashing} already holds assets/${assetId}/connect.apk with other content than the backup's: give an empty --blob-dir, or remove it\n`,
    });
    expect(existsSync(clashTarget)).toBe(false);
    expect(entries(join(clashing, 'assets', assetId!))).toEqual(['connect.apk']);
  });

  it('restores onto a mount point (a volume of its own): staged inside it, then moved in; with --force what it held is replaced', async () => {
    const volume = folder('volume');
    const fresh = await runCliOnSmallDisk(volume, '64m', ['operator', '--data-dir', volume, 'restore', backupFile], 'mkdir "$dir/lost+found";');
    expect(fresh.code).toBe(0);
    expect(fresh.left).toEqual(['assets', 'keys', 'lost+found', 'packages', 'pki', 'scanhub.db']);

    const occupied = await runCliOnSmallDisk(volume, '64m', ['operator', '--data-dir', volume, 'restore', backupFile], 'echo mine > "$dir/notes.txt";');
    expect(occupied.code).toBe(2);
    expect(occupied.stderr).toBe(`scanhub: the data directory ${volume} is not empty: restore into a new or empty directory, or pass --force to replace what it holds`);
    expect(occupied.left).toEqual(['notes.txt']);

    const forced = await runCliOnSmallDisk(volume, '64m', ['operator', '--data-dir', volume, 'restore', '--force', backupFile], 'mkdir "$dir/keys"; echo old > "$dir/keys/old.key";');
    expect(forced.code).toBe(0);
    expect(forced.left).toEqual(['assets', 'keys', 'packages', 'pki', 'scanhub.db']);
  });

  describe('a full disk: exit 1 with the reason, nothing left behind', () => {
    it('backup: the database copy does not fit', async () => {
      const disk = folder('small-disk');
      const result = await runCliOnSmallDisk(disk, '256k', ['operator', '--data-dir', dataDir, 'backup', '-o', join(disk, 'b.tar')]);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n').at(-1)).toBe('scanhub: the backup failed and no file was written: the disk is full (database or disk is full)');
      expect(result.left).toEqual([]);
    });

    it('backup: the database copy fits, the archive beside it does not', async () => {
      const disk = folder('small-disk');
      const size = statSync(backupFile).size;
      const result = await runCliOnSmallDisk(disk, `${Math.ceil((size * 1.5) / 1024)}k`, ['operator', '--data-dir', dataDir, 'backup', '-o', join(disk, 'b.tar')]);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n').at(-1)).toMatch(/^scanhub: the backup failed and no file was written: the disk is full \(ENOSPC: no space left on device, write\)$/);
      expect(result.left).toEqual([]);
    });

    it('restore: the unpacked files do not fit', async () => {
      const disk = folder('small-disk');
      const target = join(disk, 'data');
      const result = await runCliOnSmallDisk(disk, '256k', ['operator', '--data-dir', target, 'restore', backupFile]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        new RegExp(`^scanhub: the restore failed and nothing was written to ${target}: the disk is full \\(ENOSPC: no space left on device, write\\)$`),
      );
      expect(result.left).toEqual([]);
    });
  });
});

describePostgres('scanhub operator backup and restore on PostgreSQL', () => {
  it('the documented way instead (docs/postgresql.md): pg_dump while serve runs, the blob directory copied, pg_restore into an empty database, the same master key', async () => {
    const source = await freshDatabase();
    const work = mkdtempSync(join(tmpdir(), 'scanhub-backup-pg-'));
    try {
      const keyEnv = { SCANHUB_MASTER_KEY: TEST_MASTER_KEY };
      const blobs = join(work, 'blobs');
      const s1 = await serve(['--data-dir', join(work, 'a'), '--database', source, '--blob-dir', blobs], { ...FIRST_START, ...keyEnv });
      const anonymous = new ApiClient(s1.url);
      const adminToken = (await anonymous.post<{ id_token: string }>('/auth/login', { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })).id_token;
      const gateway = await provisionGateway({ admin: new ApiClient(s1.url, adminToken), anonymous }, { name: 'dock-pg' });
      const client = await connectGateway(gateway);
      for (let i = 0; i < 5; i++) await client.publishAsync(gateway.topic, JSON.stringify({ id: randomUUID(), type: 'scan', created: Date.now(), scan_code: `PG-${i}` }), { qos: 1 });
      await client.endAsync();
      const assetFile = join(work, 'connect.apk');
      const eulaFile = join(work, 'eula.txt');
      writeFileSync(assetFile, Buffer.from('asset bytes'));
      writeFileSync(eulaFile, 'Use it well.\n');
      const added = await operator(
        ['--database', source, '--blob-dir', blobs, 'assets', 'add', '--type', 'CONNECT_ANDROID_APP', '--version', '1.0.0', '--eula-version', '1', '--eula-file', eulaFile, assetFile],
        keyEnv,
      );
      expect(added.code).toBe(0);

      // While serve runs: the dump (one snapshot), then the blob directory.
      const dump = join(work, 'scanhub.dump');
      execFileSync('pg_dump', ['--format=custom', '--file', dump, '--dbname', source]);
      cpSync(blobs, join(work, 'blobs-copy'), { recursive: true });

      const target = await freshDatabase();
      execFileSync('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', target, dump]);
      const s2 = await serve(['--data-dir', join(work, 'b'), '--database', target, '--blob-dir', join(work, 'blobs-copy')], keyEnv);
      const login = await call(s2.url, 'POST', '/auth/login', { json: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      expect(login.status).toBe(200);
      const token = (login.body as { id_token: string }).id_token;
      const moved = await connectGateway({ ...gateway, endpoint: gateway.endpoint.replace(/:\d+$/, `:${s2.mqttPort}`) });
      await moved.publishAsync(gateway.topic, JSON.stringify({ id: randomUUID(), type: 'scan', created: Date.now(), scan_code: 'PG-AFTER' }), { qos: 1 });
      await moved.endAsync();
      const events = await call(s2.url, 'GET', `/${CUSTOMER}/events?gateway_id=${gateway.id}`, { token });
      expect((events.body as { items: { scan_code: string }[] }).items.map((e) => e.scan_code).sort()).toEqual(['PG-0', 'PG-1', 'PG-2', 'PG-3', 'PG-4', 'PG-AFTER']);
      const { download_url } = (
        await call(s2.url, 'POST', `/${CUSTOMER}/generate-download-url`, { token, json: { eula_version: '1', asset_type: 'CONNECT_ANDROID_APP', agreed_by: ADMIN_EMAIL } })
      ).body as { download_url: string };
      expect(Buffer.from(await (await fetch(download_url)).arrayBuffer()).toString()).toBe('asset bytes');
      expect(await stop(s2.process)).toEqual({ code: 0, signal: null });
      expect(await stop(s1.process)).toEqual({ code: 0, signal: null });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuse with one line naming pg_dump and point-in-time recovery (exit 2), without the master key, writing nothing', async () => {
    const database = await freshDatabase();
    const out = mkdtempSync(join(tmpdir(), 'scanhub-backup-pg-'));
    try {
      const backup = await operator(['--database', database, 'backup', '-o', join(out, 'b.tar')]);
      expect(backup).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'scanhub: operator backup copies a SQLite data directory; with --database the deployment lives in PostgreSQL, whose backup is PostgreSQL\'s job: use pg_dump (or WAL archiving for point-in-time recovery), copy --blob-dir, and keep the master key (docs/postgresql.md "Backup and restore")\n',
      });
      // From the environment too, as `serve` reads it; the master key makes no difference.
      const fromEnv = await operator(['backup', '-o', join(out, 'b.tar')], { SCANHUB_DATABASE_URL: database, SCANHUB_MASTER_KEY: TEST_MASTER_KEY });
      expect(fromEnv).toEqual(backup);
      expect(entries(out)).toEqual([]);

      writeFileSync(join(out, 'b.tar'), 'not read');
      const restore = await operator(['--database', database, '--data-dir', join(out, 'data'), 'restore', join(out, 'b.tar')]);
      expect(restore).toEqual({
        code: 2,
        stdout: '',
        stderr:
          'scanhub: operator restore restores a SQLite data directory; a PostgreSQL deployment is restored with PostgreSQL\'s own tools (pg_restore, or point-in-time recovery), its --blob-dir copied back, and the same master key (docs/postgresql.md "Backup and restore")\n',
      });
      expect(entries(out)).toEqual(['b.tar']);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

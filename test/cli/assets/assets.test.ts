import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eulaChecksum } from '../../../src/domain/assets.js';
import { adminEnv, runCli } from '../../helpers/cli.js';
import { ADMIN_EMAIL, CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

const EULA = 'Licence for the scanner firmware.\nDo not reverse-engineer.\n';
const FIRMWARE = randomBytes(150_000);
const { createHash } = await import('node:crypto');
const FIRMWARE_SHA256 = createHash('sha256').update(FIRMWARE).digest('hex');

let ts: TestServer;
let work: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  ts = await startTestServer();
  work = mkdtempSync(join(tmpdir(), 'scanhub-assets-cli-'));
  writeFileSync(join(work, 'eula.txt'), EULA);
  writeFileSync(join(work, 'mark-fw-2.0.bin'), FIRMWARE);
  env = adminEnv(ts, { XDG_CONFIG_HOME: work, SCANHUB_DATA_DIR: ts.dataDir, ...ts.operatorEnv });
});

afterEach(async () => {
  await ts.close();
  rmSync(work, { recursive: true, force: true });
});

/** The CLI; `operator` commands also name the test server's database (PostgreSQL). */
const cli = (...args: string[]) => runCli(args[0] === 'operator' ? [...args, ...ts.operatorArgs.slice(2)] : args, { env, cwd: work });
const add = (version = '2.0') =>
  cli('operator', 'assets', 'add', '--type', 'MARK_FIRMWARE', '--version', version, '--eula-version', 'eula-7', '--eula-file', join(work, 'eula.txt'), join(work, 'mark-fw-2.0.bin'));

describe('scanhub operator assets', () => {
  it('add copies the file into the data directory (0600) and records it; list shows it as the default', async () => {
    const added = await add();
    expect(added.code).toBe(0);
    expect(added.stderr).toBe('Registered MARK_FIRMWARE 2.0 (mark-fw-2.0.bin, 150000 bytes); it is now the default of its type.\n');
    const [id] = readdirSync(join(ts.dataDir, 'assets'));
    const stored = join(ts.dataDir, 'assets', id!, 'mark-fw-2.0.bin');
    expect(readFileSync(stored).equals(FIRMWARE)).toBe(true);
    expect(statSync(stored).mode & 0o777).toBe(0o600);

    const list = await cli('operator', 'assets', 'list', '--json');
    const [asset] = JSON.parse(list.stdout) as { registered: number }[];
    expect(asset).toEqual({
      asset_type: 'MARK_FIRMWARE',
      asset_version: '2.0',
      file_name: 'mark-fw-2.0.bin',
      file_size: 150_000,
      file_sha256: FIRMWARE_SHA256,
      eula_version: 'eula-7',
      eula_text: EULA,
      eula_checksum: eulaChecksum(EULA),
      registered: asset!.registered,
      default: true,
    });
  });

  it('add refuses a version that is already registered, and an unknown type', async () => {
    await add();
    expect(await add()).toMatchObject({
      code: 1,
      stderr: `scanhub: cannot register ${join(work, 'mark-fw-2.0.bin')}: MARK_FIRMWARE 2.0 is already registered: register a new version\n`,
    });
    const unknown = await cli('operator', 'assets', 'add', '--type', 'TOASTER', '--version', '1', '--eula-version', '1', '--eula-file', 'x', 'y');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("option '--type <type>' argument 'TOASTER' is invalid. Allowed choices are CONNECT_ANDROID_APP, TRADE_FAIR_DEMO_APP, PLATFORM_MOBILE_APP, MARK_FIRMWARE.");
  });
});

describe('scanhub assets download', () => {
  it('needs --accept-eula when not interactive', async () => {
    await add();
    expect(await cli('assets', 'download', '--type', 'MARK_FIRMWARE', '-o', 'fw.bin')).toMatchObject({
      code: 2,
      stderr: 'scanhub: --accept-eula required when not running interactively\n',
    });
  });

  it('agrees, downloads the exact bytes, says where, and the operator sees the agreement', async () => {
    await add();
    const result = await cli('assets', 'download', '--type', 'MARK_FIRMWARE', '--accept-eula', '-o', 'fw.bin');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`Agreed to EULA eula-7 as ${ADMIN_EMAIL}; wrote MARK_FIRMWARE 2.0 (150000 bytes, SHA-256 verified) to ${join(work, 'fw.bin')}.\n`);
    expect(readFileSync(join(work, 'fw.bin')).equals(FIRMWARE)).toBe(true);

    const agreements = await cli('operator', 'assets', 'agreements', '--customer', CUSTOMER, '--json');
    const [agreement] = JSON.parse(agreements.stdout) as { agreed_at: number; asset_id: string }[];
    expect(agreement).toEqual({
      agreed_at: agreement!.agreed_at,
      customer_id: CUSTOMER,
      user_id: (await ts.server.ctx.store.users.byEmail(ADMIN_EMAIL))!.id,
      agreed_by: ADMIN_EMAIL,
      asset_id: agreement!.asset_id,
      asset_type: 'MARK_FIRMWARE',
      asset_version: '2.0',
      eula_version: 'eula-7',
      eula_checksum: eulaChecksum(EULA),
    });
    expect((await cli('operator', 'assets', 'agreements', '--customer', 'other', '--json')).stdout.trim()).toBe('[]');

    // The file is there now: a second download must not overwrite it silently.
    expect(await cli('assets', 'download', '--type', 'MARK_FIRMWARE', '--accept-eula', '-o', 'fw.bin')).toMatchObject({
      code: 2,
      stderr: `scanhub: ${join(work, 'fw.bin')} exists: pass --force to overwrite it or -o for another file\n`,
    });
  });

  it('names the versions there are when the asked one is missing', async () => {
    await add();
    expect(await cli('assets', 'download', '--type', 'MARK_FIRMWARE', '--version', '9', '--accept-eula')).toMatchObject({
      code: 1,
      stderr: 'scanhub: no MARK_FIRMWARE version "9" is available (versions: 2.0)\n',
    });
  });
});

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eulaChecksum } from '../../../src/domain/assets.js';
import { registerAssetFile } from '../../../src/store/operator/asset-files.js';
import type { Asset } from '../../../src/store/ports/index.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';
import { call } from '../../helpers/http.js';
import { insertCustomer } from '../../helpers/store-rows.js';

const T0 = Date.UTC(2025, 5, 1, 8);
const EULA_1 = 'Firmware licence, version 1.\nUse it well.\n';
const EULA_2 = 'Firmware licence, version 2.\nÜse it even better.\n';
const FIRMWARE_2 = randomBytes(200_000);

let ts: TestServer;
let now: number;
let files: string;
let firmware1: Asset;
let firmware2: Asset;
const path = `/${CUSTOMER}/generate-download-url`;

async function register(type: 'MARK_FIRMWARE' | 'CONNECT_ANDROID_APP', version: string, eulaVersion: string, eula: string, name: string, bytes: Buffer) {
  const file = join(files, name);
  writeFileSync(file, bytes);
  return registerAssetFile(
    ts.server.ctx.store.assets,
    ts.dataDir,
    { assetType: type, assetVersion: version, eulaVersion, eulaText: eula, file },
    now,
  );
}

beforeEach(async () => {
  now = T0;
  ts = await startTestServer({ clock: () => now });
  files = mkdtempSync(join(tmpdir(), 'scanhub-assets-'));
  firmware1 = await register('MARK_FIRMWARE', '1.0', 'eula-1', EULA_1, 'firmware-1.0.bin', Buffer.from('old firmware'));
  now = T0 + 1_000;
  firmware2 = await register('MARK_FIRMWARE', '2.0', 'eula-2', EULA_2, 'firmware 2.0.bin', FIRMWARE_2);
});

afterEach(async () => {
  await ts.close();
  rmSync(files, { recursive: true, force: true });
});

/**
 * GET of a download link on a connection of its own: `serve` closes only idle keep-alive
 * connections, and a response with Content-Length may reach the client before the server marks
 * it finished, leaving the connection open until its keep-alive timeout (reported to the lead).
 */
const fetchLink = (url: string) => request(url, { reset: true });

const agreement = { eula_version: 'eula-2', asset_type: 'MARK_FIRMWARE', agreed_by: 'tech@example.com' };
/** The recorded agreements, through the store seam. */
const agreements = () => ts.server.ctx.store.assets.agreements();

describe('generate-download-url refusals', () => {
  const refusals: { name: string; body: Record<string, unknown>; status: number; details: string }[] = [
    { name: 'a missing eula_version', body: { eula_version: undefined }, status: 400, details: 'Missing body field "eula_version".' },
    {
      name: 'an eula_version that is not the current one',
      body: { eula_version: 'eula-1' },
      status: 400,
      details: 'Body field "eula_version" is "eula-1", but the EULA of MARK_FIRMWARE 2.0 is version "eula-2": read and agree to that one.',
    },
    {
      name: 'the EULA version of another version of the asset',
      body: { asset_version: '1.0' },
      status: 400,
      details: 'Body field "eula_version" is "eula-2", but the EULA of MARK_FIRMWARE 1.0 is version "eula-1": read and agree to that one.',
    },
    {
      name: 'a wrong eula_checksum',
      body: { eula_checksum: eulaChecksum(EULA_1) },
      status: 400,
      details:
        'Body field "eula_checksum" does not match the EULA version "eula-2" of MARK_FIRMWARE 2.0: fetch its text again (GET /{customer_id}/assets).',
    },
    {
      name: 'a lower-case eula_checksum',
      body: { eula_checksum: eulaChecksum(EULA_2).toLowerCase() },
      status: 400,
      details: 'Body field "eula_checksum" must match pattern "^[A-Z0-9]+$".',
    },
    { name: 'agreed_by that is not an e-mail address', body: { agreed_by: 'tech' }, status: 400, details: 'Body field "agreed_by" must be an e-mail address, not "tech".' },
    { name: 'agreed_by with a space', body: { agreed_by: 'ada lovelace@example.com' }, status: 400, details: 'Body field "agreed_by" must be an e-mail address, not "ada lovelace@example.com".' },
    { name: 'a missing agreed_by', body: { agreed_by: undefined }, status: 400, details: 'Missing body field "agreed_by".' },
    {
      name: 'an unknown asset_type',
      body: { asset_type: 'TOASTER_FIRMWARE' },
      status: 400,
      details: 'Body field "asset_type" must be one of CONNECT_ANDROID_APP, TRADE_FAIR_DEMO_APP, PLATFORM_MOBILE_APP, MARK_FIRMWARE.',
    },
    { name: 'a missing asset_type', body: { asset_type: undefined }, status: 400, details: 'Missing body field "asset_type".' },
    { name: 'an unknown field', body: { user_id: 'x' }, status: 400, details: 'Unknown body field "user_id": it is not part of this call.' },
    {
      name: 'an asset_version that does not exist',
      body: { asset_version: '9.9' },
      status: 404,
      details: 'No asset of type MARK_FIRMWARE with version "9.9" is available.',
    },
    {
      name: 'a type without any asset',
      body: { asset_type: 'TRADE_FAIR_DEMO_APP' },
      status: 404,
      details: 'No asset of type TRADE_FAIR_DEMO_APP is available.',
    },
  ];
  for (const r of refusals) {
    it(`${r.name} is ${r.status} and records no agreement`, async () => {
      const answer = await call(ts.url, 'POST', path, { token: ts.adminToken, json: { ...agreement, ...r.body } });
      expect(answer).toMatchObject({ status: r.status, body: { title: r.status === 404 ? 'Not Found' : 'Bad Request', details: r.details } });
      expect(await agreements()).toEqual([]);
    });
  }

  it('no Authorization header is 401, another customer 403', async () => {
    await insertCustomer(ts.server, 'other');
    expect((await call(ts.url, 'POST', path, { json: agreement })).status).toBe(401);
    expect((await call(ts.url, 'POST', '/other/generate-download-url', { token: ts.adminToken, json: agreement })).status).toBe(403);
  });
});

describe('generate-download-url', () => {
  it('accepts an address without a dot in its domain, like the default administrator admin@localhost', async () => {
    const answer = await call(ts.url, 'POST', path, { token: ts.adminToken, json: { ...agreement, agreed_by: 'admin@localhost' } });
    expect(answer.status).toBe(200);
    expect((await agreements()).map((a) => a.agreed_by)).toEqual(['admin@localhost']);
  });

  it('records the agreement and links the latest version, byte for byte', async () => {
    const user = await ts.createUser('USER_ROLE', 'tech@example.com');
    now = T0 + 5_000;
    const { download_url } = await user.client.post<{ download_url: string }>(path, { ...agreement, eula_checksum: eulaChecksum(EULA_2) });
    expect(download_url.startsWith(`${ts.url}/downloads/assets/${firmware2.id}/firmware%202.0.bin?expires=${T0 + 5_000 + 600_000}&signature=`)).toBe(true);
    expect(await agreements()).toEqual([
      {
        agreed_at: T0 + 5_000,
        customer_id: CUSTOMER,
        user_id: user.id,
        agreed_by: 'tech@example.com',
        asset_id: firmware2.id,
        asset_type: 'MARK_FIRMWARE',
        asset_version: '2.0',
        eula_version: 'eula-2',
        eula_checksum: eulaChecksum(EULA_2),
      },
    ]);
    const download = await fetchLink(download_url);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-disposition']).toBe(`attachment; filename="firmware 2.0.bin"; filename*=UTF-8''firmware%202.0.bin`);
    expect(Buffer.from(await download.body.arrayBuffer()).equals(FIRMWARE_2)).toBe(true);
  });

  it('gives an older version with its own EULA when asked', async () => {
    const { download_url } = await ts.admin.post<{ download_url: string }>(path, { ...agreement, eula_version: 'eula-1', asset_version: '1.0' });
    const download = await fetchLink(download_url);
    expect(await download.body.text()).toBe('old firmware');
    expect((await agreements()).map((a) => [a.asset_version, a.eula_version, a.eula_checksum])).toEqual([['1.0', 'eula-1', eulaChecksum(EULA_1)]]);
  });

  it('the link is valid for 10 minutes, then 403', async () => {
    const { download_url } = await ts.admin.post<{ download_url: string }>(path, agreement);
    now = T0 + 1_000 + 600_000 - 1;
    const valid = await fetchLink(download_url);
    expect([valid.statusCode, (await valid.body.arrayBuffer()).byteLength]).toEqual([200, 200_000]);
    now = T0 + 1_000 + 600_000;
    const expired = await fetchLink(download_url);
    expect([expired.statusCode, await expired.body.json()]).toEqual([
      403,
      { title: 'Forbidden', details: 'This download link has expired: request a new one.' },
    ]);
  });
});

describe('GET /assets', () => {
  it('lists each asset with its EULA, newest version of a type first and marked default', async () => {
    const user = await ts.createUser('USER_ROLE');
    const list = await user.client.get(`/${CUSTOMER}/assets`);
    const item = (asset: Asset, eula: string, isDefault: boolean) => ({
      asset_type: asset.asset_type,
      asset_version: asset.asset_version,
      default: isDefault,
      file_name: asset.file_name,
      file_size: asset.file_size,
      file_sha256: asset.file_sha256,
      eula_version: asset.eula_version,
      eula_checksum: eulaChecksum(eula),
      eula_text: eula,
      registered: asset.registered,
    });
    expect(list).toEqual({
      items: [item(firmware2, EULA_2, true), item(firmware1, EULA_1, false)],
      links: {},
      metadata: { description: 'Assets of this deployment, newest version of each type first', size: 2, filters: [] },
    });
    expect(firmware2).toMatchObject({ file_size: 200_000, registered: T0 + 1_000 });
  });

  it('filters by asset_type and refuses an unknown one', async () => {
    expect(await ts.admin.get(`/${CUSTOMER}/assets?asset_type=CONNECT_ANDROID_APP`)).toEqual({
      items: [],
      links: {},
      metadata: {
        description: 'Assets of this deployment, newest version of each type first',
        size: 0,
        filters: [{ name: 'asset_type', value: 'CONNECT_ANDROID_APP' }],
      },
    });
    expect((await call(ts.url, 'GET', `/${CUSTOMER}/assets?asset_type=TOASTER`, { token: ts.adminToken })).body).toEqual({
      title: 'Bad Request',
      details: 'Query parameter "asset_type" must be one of CONNECT_ANDROID_APP, TRADE_FAIR_DEMO_APP, PLATFORM_MOBILE_APP, MARK_FIRMWARE.',
    });
  });
});

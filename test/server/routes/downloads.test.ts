import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedLinkPath } from '../../../src/domain/signed-links.js';
import { signDownloadLink } from '../../../src/server/routes/downloads.js';
import { startTestServer, type TestServer } from '../../helpers/server.js';

const START = Date.UTC(2024, 4, 2, 8, 0, 0);
const LIFETIME = 5 * 60 * 1000;
const CONTENT = 'id,class\r\n"a,b",event\r\n';

let now = START;
let t: TestServer;

async function fetchLink(link: string) {
  const response = await fetch(link);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const refused = (details: string) => ({ status: 403, body: { title: 'Forbidden', details } });
const EXPIRED = refused('This download link has expired: request a new one.');
const ALTERED = refused('This download link is not valid: it was altered or is incomplete.');

beforeAll(async () => {
  t = await startTestServer({ clock: () => now });
  writeFileSync(join(t.dataDir, 'exports', 'report.csv'), CONTENT);
  writeFileSync(join(t.dataDir, 'exports', 'other.csv'), 'other');
});
afterAll(async () => t.close());

describe('GET /downloads/*', () => {
  it('streams the file of a valid link with its type, length and name', async () => {
    now = START;
    const link = signDownloadLink(t.server.ctx, 'exports/report.csv', LIFETIME);
    expect(link).toMatch(new RegExp(`^${t.url}/downloads/exports/report\\.csv\\?expires=${START + LIFETIME}&signature=[A-Za-z0-9_-]{43}$`));
    const file = await fetchLink(link);
    expect(file.status).toBe(200);
    expect(file.text).toBe(CONTENT);
    expect(file.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(file.headers.get('content-length')).toBe(String(Buffer.byteLength(CONTENT)));
    expect(file.headers.get('content-disposition')).toBe(`attachment; filename="report.csv"; filename*=UTF-8''report.csv`);
    expect(file.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('serves the link with its path as one %2F-encoded parameter, as a client generated from /downloads/{path} sends it', async () => {
    now = START;
    const link = signDownloadLink(t.server.ctx, 'exports/report.csv', LIFETIME).replace('/downloads/exports/report.csv', '/downloads/exports%2Freport.csv');
    const file = await fetchLink(link);
    expect({ status: file.status, text: file.text }).toEqual({ status: 200, text: CONTENT });
  });

  it('names a file outside Latin-1 with an ASCII fallback and the exact UTF-8 name', async () => {
    now = START;
    writeFileSync(join(t.dataDir, 'exports', 'Prüfbericht ✓ "Q1".csv'), 'x');
    const file = await fetchLink(signDownloadLink(t.server.ctx, 'exports/Prüfbericht ✓ "Q1".csv', LIFETIME));
    expect(file.status).toBe(200);
    expect(file.text).toBe('x');
    expect(file.headers.get('content-disposition')).toBe(
      `attachment; filename="Pr_fbericht _ _Q1_.csv"; filename*=UTF-8''Pr%C3%BCfbericht%20%E2%9C%93%20%22Q1%22.csv`,
    );
  });

  it('refuses a link once its expiry has come (injected clock), with the error body', async () => {
    now = START;
    const link = signDownloadLink(t.server.ctx, 'exports/report.csv', LIFETIME);
    now = START + LIFETIME - 1;
    expect((await fetchLink(link)).status).toBe(200);
    now = START + LIFETIME;
    const response = await fetchLink(link);
    expect({ status: response.status, body: JSON.parse(response.text) }).toEqual(EXPIRED);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it.each([
    ['another signature', (link: URL) => link.searchParams.set('signature', link.searchParams.get('signature')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')))],
    ['a later expiry', (link: URL) => link.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 60_000))],
    ['another file', (link: URL) => (link.pathname = '/downloads/exports/other.csv')],
    ['no signature', (link: URL) => link.searchParams.delete('signature')],
    ['no expiry', (link: URL) => link.searchParams.delete('expires')],
  ])('refuses a link altered to %s', async (_name, alter) => {
    now = START;
    const link = new URL(signDownloadLink(t.server.ctx, 'exports/report.csv', LIFETIME));
    alter(link);
    const response = await fetchLink(link.href);
    expect({ status: response.status, body: JSON.parse(response.text) }).toEqual(ALTERED);
  });

  it('serves nothing outside the served folders, even with a valid signature', async () => {
    now = START;
    const path = signedLinkPath(t.server.ctx.linkKey, 'keys/links.key', START + LIFETIME);
    const response = await fetchLink(t.url + path);
    expect({ status: response.status, body: JSON.parse(response.text) }).toEqual(ALTERED);
  });

  it('answers 404 when the file of a valid link is gone', async () => {
    now = START;
    const response = await fetchLink(signDownloadLink(t.server.ctx, 'exports/gone.csv', LIFETIME));
    expect({ status: response.status, body: JSON.parse(response.text) }).toEqual({
      status: 404,
      body: { title: 'Not Found', details: 'The file of this link no longer exists: files are kept for a limited time.' },
    });
  });
});

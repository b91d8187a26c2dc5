import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const REPOSITORY = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SPECTRAL = join(dirname(createRequire(import.meta.url).resolve('@stoplight/spectral-cli/package.json')), 'dist/index.js');

interface Finding {
  code: string;
  message: string;
  path: string[];
  severity: number;
}

/** Spectral's findings on a document file, with the repository's .spectral.yaml (spectral:oas); it needs no network. */
function lint(file: string): Promise<Finding[]> {
  return new Promise((resolve, reject) => {
    const args = [SPECTRAL, 'lint', '--ruleset', join(REPOSITORY, '.spectral.yaml'), '--format', 'json', '--quiet', file];
    // Exit status 1 means "findings of severity error": the JSON on stdout says which.
    execFile(process.execPath, args, { cwd: REPOSITORY }, (error, stdout, stderr) => {
      try {
        resolve(JSON.parse(stdout) as Finding[]);
      } catch {
        reject(new Error(`spectral gave no JSON (${error?.message ?? 'exit 0'}): ${stderr}`));
      }
    });
  });
}

const summary = (findings: Finding[]) => findings.map((f) => `${f.severity === 0 ? 'error' : 'warning'} ${f.code} at ${f.path.join('.')}: ${f.message}`);

let t: TestServer;
let served: string;

beforeAll(async () => {
  t = await startTestServer();
  const answer = await call(t.url, 'GET', '/openapi.json');
  expect(answer.status).toBe(200);
  served = answer.text;
});
afterAll(async () => t.close());

describe('Spectral (spectral:oas) on /openapi.json', () => {
  it('finds nothing to say about the document a real server serves: no error, no warning', async () => {
    const file = join(t.dataDir, 'openapi.json');
    writeFileSync(file, served);
    expect(summary(await lint(file))).toEqual([]);
  });

  it('does find what the document once lacked (the check is not vacuous)', async () => {
    const document = JSON.parse(served) as { servers?: unknown; paths: Record<string, Record<string, { operationId?: string }>> };
    delete document.servers;
    delete document.paths['/{customer_id}/events']!.get!.operationId;
    const file = join(t.dataDir, 'openapi-broken.json');
    writeFileSync(file, JSON.stringify(document));
    expect(summary(await lint(file))).toEqual([
      'warning oas3-api-servers at : OpenAPI "servers" must be present and non-empty array.',
      'warning operation-operationId at paths./{customer_id}/events.get: Operation must have "operationId".',
    ]);
  });
});

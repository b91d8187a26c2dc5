import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { signDownloadLink } from '../src/server/routes/downloads.js';
import { startTestServer } from './helpers/server.js';

describe('close()', () => {
  it('finishes after a large download on a kept-alive connection (no wait for the keep-alive timeout)', async () => {
    const t = await startTestServer();
    const content = 'x'.repeat(4 * 1024 * 1024);
    writeFileSync(join(t.dataDir, 'exports', 'big.csv'), content);
    const agent = new Agent({ keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
    const response = await request(signDownloadLink(t.server.ctx, 'exports/big.csv', 60_000), { dispatcher: agent });
    expect(response.statusCode).toBe(200);
    expect((await response.body.text()).length).toBe(content.length);
    // Without the cut the server waits for the connection's 72 s keep-alive, past this test's timeout.
    await t.close();
    await agent.close();
    const refused = await request(`${t.url}/healthz`).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(refused).toBe('ECONNREFUSED');
  }, 20_000);
});

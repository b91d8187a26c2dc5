import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { signDownloadLink } from '../../src/server/routes/downloads.js';
import { startTestServer } from '../helpers/server.js';

describe('close()', () => {
  it('finishes while a client stalls reading a large download (its connection is cut after the grace)', async () => {
    const t = await startTestServer();
    const content = 'x'.repeat(32 * 1024 * 1024);
    writeFileSync(join(t.dataDir, 'exports', 'big.csv'), content);
    const agent = new Agent({ keepAliveTimeout: 600_000, keepAliveMaxTimeout: 600_000 });
    const response = await request(signDownloadLink(t.server.ctx, 'exports/big.csv', 60_000), { dispatcher: agent });
    expect(response.statusCode).toBe(200);
    // The client reads nothing: the server's write stays backpressured, the request in flight.
    // Without the cut, close() would wait for it forever (past this test's timeout).
    await t.close();
    await expect(response.body.text()).rejects.toThrow();
    await agent.close();
    const refused = await request(`${t.url}/healthz`).then(
      () => 'answered',
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(refused).toBe('ECONNREFUSED');
  }, 20_000);
});

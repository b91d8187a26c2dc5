import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../../helpers/cli.js';
import { CUSTOMER, startTestServer, type TestServer } from '../../helpers/server.js';

// The operator reads what the ingest writer quarantined (docs/gateways-mqtt.md "Quarantine"),
// from the data directory while serve runs. The dead letters are written by the store the writer
// thread uses; test/hostile/mqtt-poison.test.ts makes one with a real crash.

let t: TestServer;
const GATEWAY = '0b7d3f2a-4c5e-4f60-8a1b-2c3d4e5f6a7b';
// Not UTF-8: the payload must come back byte for byte.
const PAYLOAD = Buffer.concat([Buffer.from('{"type":"scan","scan_code":"'), Buffer.from([0xff, 0x00]), Buffer.from('"}')]);
beforeAll(async () => {
  t = await startTestServer();
  const now = 1_800_000_000_000;
  await t.server.ctx.store.gateways.createAll(CUSTOMER, [{ id: GATEWAY, name: 'dock', usecase: 'picking', station: 'S1' }], now);
  // Kept as the ingest writer keeps them: quarantined messages in a group commit, through the store seam.
  const { ingest } = t.server.ctx.store;
  await ingest.commit([{ gatewayId: GATEWAY, receivedAt: now, payload: PAYLOAD, quarantine: { at: now + 250, reason: 'crashed the ingest writer thread: boom' } }]);
  await ingest.commit([{ gatewayId: 'gone', receivedAt: now + 1, payload: Buffer.from('[]'), quarantine: { at: now + 300, reason: 'crashed the ingest writer thread: boom\tagain' } }]);
});
afterAll(() => t.close());

const operator = (...args: string[]) => runCli(['operator', 'dead-letters', ...args, ...t.operatorArgs], { env: t.operatorEnv });

describe('scanhub operator dead-letters', () => {
  it('list --json: every dead letter, oldest first, the payload by its size', async () => {
    const result = await operator('list', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      { seq: 1, gateway_id: GATEWAY, customer_id: CUSTOMER, received: 1_800_000_000_000, quarantined: 1_800_000_000_250, reason: 'crashed the ingest writer thread: boom', payload_bytes: PAYLOAD.length },
      { seq: 2, gateway_id: 'gone', customer_id: null, received: 1_800_000_000_001, quarantined: 1_800_000_000_300, reason: 'crashed the ingest writer thread: boom\tagain', payload_bytes: 2 },
    ]);
  });

  it('list, piped: tab-separated rows', async () => {
    const result = await operator('list');
    expect(result.stdout).toBe(
      `1\t2027-01-15T08:00:00.250Z\t2027-01-15T08:00:00.000Z\t${CUSTOMER}\t${GATEWAY}\t${PAYLOAD.length}\tcrashed the ingest writer thread: boom\n` +
        '2\t2027-01-15T08:00:00.300Z\t2027-01-15T08:00:00.001Z\t\tgone\t2\tcrashed the ingest writer thread: boom again\n',
    );
  });

  it('payload <seq>: the bytes as the gateway sent them', () => {
    // Read as bytes: runCli decodes stdout as text.
    const result = spawnSync(process.execPath, [BIN, 'operator', 'dead-letters', 'payload', '1', ...t.operatorArgs], { env: { PATH: process.env.PATH, ...t.operatorEnv } });
    expect(result.status).toBe(0);
    expect(Buffer.compare(result.stdout, PAYLOAD)).toBe(0);
  });

  it.each([
    ['3', 1, 'scanhub: there is no dead letter 3: see `scanhub operator dead-letters list`\n'],
    ['x', 2, 'scanhub: "x" is not a dead letter\'s seq (see `scanhub operator dead-letters list`)\n'],
  ])('payload %s: exit %i', async (seq, code, stderr) => {
    expect(await operator('payload', seq)).toEqual({ code, stdout: '', stderr });
  });
});

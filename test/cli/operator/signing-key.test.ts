import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { UUID } from '../../helpers/patterns.js';
import { ADMIN_PASSWORD, CUSTOMER, startTestServer } from '../../helpers/server.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { TEST_STORE, runSql, runSqliteSql, testDatabase } from '../../helpers/test-store.js';
import { until } from '../../helpers/until.js';

// `scanhub operator rotate-signing-key` (docs/users.md "Signing keys"): a new key signs, the old
// one keeps verifying its tokens until they expire, the JWKS lists both, and a running `serve`
// takes the new key up without a restart (signing within a second, verifying at once by its kid).

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

/** An instance reads the keys again at most once a second: a probe is asked every 100 ms, for at most 5 s. */
const KEYS_RELOADED = { what: 'the keys read again', timeoutMs: 5000, everyMs: 100 };

const jwksKids = async (url: string) => ((await call(url, 'GET', '/.well-known/jwks.json')).body as { keys: { kid: string }[] }).keys.map((key) => key.kid);

describe('scanhub operator rotate-signing-key, on an in-process server', () => {
  it('prints the new key; old tokens stay valid, new ones carry the new kid, the JWKS lists both; each customer audits it', async () => {
    const t = await startTestServer();
    try {
      const before = t.adminToken;
      const oldKid = kidOf(before)!;
      const rotated = await runCli(['operator', ...t.operatorArgs, 'rotate-signing-key'], { env: t.operatorEnv });
      const newKid = /^kid\t(\S+)\n/.exec(rotated.stdout)?.[1];
      expect(rotated).toEqual({
        code: 0,
        stdout: `kid\t${newKid}\nverifying\t${oldKid},${newKid}\ndropped\t\n`,
        stderr: `New IdTokens are signed with key ${newKid}: running instances take it up within 1 second; tokens of the older keys stay valid until they expire (at most 60 minutes).\n`,
      });
      expect(newKid).toMatch(UUID);

      expect((await call(t.url, 'GET', `/${CUSTOMER}/me`, { token: before })).status).toBe(200);
      expect(await until(() => jwksKids(t.url), (kids) => kids.length === 2, KEYS_RELOADED)).toEqual([oldKid, newKid]);
      const after = await until(() => t.login('admin@example.com', ADMIN_PASSWORD), (token) => kidOf(token) === newKid, KEYS_RELOADED);
      expect(kidOf(after)).toBe(newKid);
      expect((await call(t.url, 'GET', `/${CUSTOMER}/me`, { token: after })).status).toBe(200);

      const log = await t.admin.get<{ items: object[] }>(`/${CUSTOMER}/audit-log?action=signing_key.rotated`);
      expect(log.items).toEqual([
        {
          id: expect.any(String),
          time: expect.any(Number),
          action: 'signing_key.rotated',
          actor: { type: 'operator', id: 'operator' },
          target: { type: 'signing_key', id: newKid },
          details: { verifying: [oldKid, newKid], dropped: [] },
        },
      ]);
    } finally {
      await t.close();
    }
  });
});

describe('scanhub operator rotate-signing-key, against a running serve process', () => {
  const dirs: string[] = [];
  const running: ServeProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map(stop));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('the process signs with the new key without a restart and keeps accepting the old tokens; its passwords are hashed at 2^17', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-rotate-'));
    dirs.push(dataDir);
    const database = await testDatabase();
    const port = await freePort();
    const serve = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0'], { SCANHUB_ADMIN_PASSWORD: ADMIN_PASSWORD }, database);
    running.push(serve);
    await serve.stderrMatches(/scanhub is serving .*\n/);
    const url = `http://127.0.0.1:${port}`;
    const login = async () => ((await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: ADMIN_PASSWORD } })).body as { id_token: string }).id_token;
    try {
      const before = await login();
      const rotated = await runCli(['operator', '--data-dir', dataDir, ...database.args, 'rotate-signing-key', '--json'], { env: database.env });
      expect(rotated.code).toBe(0);
      const { kid: newKid, verifying } = JSON.parse(rotated.stdout) as { kid: string; verifying: string[] };
      expect(verifying).toEqual([kidOf(before), newKid]);

      const after = await until(login, (token) => kidOf(token) === newKid, KEYS_RELOADED);
      expect(kidOf(after)).toBe(newKid);
      for (const token of [before, after]) expect((await call(url, 'GET', '/default/me', { token })).status).toBe(200);
      expect(await jwksKids(url)).toEqual(verifying);

      // The cost of `serve`'s hashes is not the test servers' cheaper one.
      const sql = 'SELECT password_hash FROM users';
      const [row] = TEST_STORE === 'postgres' ? await runSql(database.args[1]!, sql) : runSqliteSql(dataDir, sql);
      expect(String(row!.password_hash)).toMatch(/^scrypt\$131072\$8\$1\$/);
    } finally {
      expect(await stop(serve)).toEqual({ code: 0, signal: null });
      await database.drop();
    }
  });
});

import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../src/serve/start.js';
import { call } from '../helpers/http.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../helpers/serve-process.js';

const started: ServeProcess[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map(stop));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDataDir(): string {
  const parent = mkdtempSync(join(tmpdir(), 'scanhub-serve-'));
  dirs.push(parent);
  return join(parent, 'data');
}

/** Starts `serve` on free ports and waits for its ready line. */
async function serve(dataDir: string, env: Record<string, string> = {}, viaEnv = false) {
  const port = await freePort();
  const mqttPort = await freePort();
  const args = viaEnv ? [] : ['--data-dir', dataDir, '--port', String(port), '--mqtt-port', String(mqttPort)];
  const extra: Record<string, string> = viaEnv ? { SCANHUB_DATA_DIR: dataDir, SCANHUB_PORT: String(port), SCANHUB_MQTT_PORT: String(mqttPort) } : {};
  const process = spawnServe(args, { ...extra, ...env });
  started.push(process);
  await process.stderrMatches(/scanhub is serving .*\n/);
  return { process, url: `http://127.0.0.1:${port}`, port, mqttPort };
}

const mode = (path: string) => statSync(path).mode & 0o777;
const login = (url: string, email: string, password: string) => call(url, 'POST', '/auth/login', { json: { email, password } });

describe('scanhub serve (as a process)', () => {
  it('first start: creates a private data directory, prints the generated admin password once, serves, logs JSON, stops on SIGTERM', async () => {
    const dataDir = freshDataDir();
    const { process, url, mqttPort } = await serve(dataDir);
    const [, password] = process.stderr().match(/Generated administrator password \(shown once, store it now\): (\S+)\n/) ?? [];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(process.stderr()).toBe(
      'Created customer "default" with administrator admin@localhost.\n' +
        `Generated administrator password (shown once, store it now): ${password}\n` +
        `scanhub is serving ${url} (MQTT over TLS on port ${mqttPort}); Ctrl-C stops it.\n`,
    );

    const health = await call(url, 'GET', '/healthz');
    // The threads may still be opening the database: that does not hold back readiness.
    const running = { state: expect.stringMatching(/^(starting|running)$/), starts: 1, last_cause: null };
    expect({ status: health.status, body: health.body }).toEqual({
      status: 200,
      body: { status: 'ok', http: 'ok', mqtt: 'ok', database: 'ok', signals: 'ok', threads: { 'ingest writer': running, checkpointer: running } },
    });
    expect(await login(url, 'admin@localhost', password!)).toMatchObject({ status: 200, body: { customer_id: 'default' } });

    expect(mode(dataDir)).toBe(0o700);
    for (const dir of ['keys', 'pki', 'exports', 'assets']) expect({ dir, mode: mode(join(dataDir, dir)) }).toEqual({ dir, mode: 0o700 });
    for (const file of ['keys/idtoken.jwk', 'keys/links.key', 'scanhub.db']) expect({ file, mode: mode(join(dataDir, file)) }).toEqual({ file, mode: 0o600 });

    expect(await stop(process)).toEqual({ code: 0, signal: null });
    const lines = process.stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as { level: number; time: number; msg: string });
    expect(lines.every((line) => typeof line.level === 'number' && typeof line.time === 'number' && typeof line.msg === 'string')).toBe(true);
    const messages = lines.map((line) => line.msg);
    expect(messages).toContain('scanhub listening');
    expect(messages).toContain('incoming request');
    expect(messages.indexOf('shutting down')).toBeGreaterThan(messages.lastIndexOf('request completed'));
    // Nothing on stdout but JSON lines; the password never reaches the log.
    expect(process.stdout()).not.toContain(password);
  });

  it('second start on the same directory: prints no password, keeps users and signing keys', async () => {
    const dataDir = freshDataDir();
    // Both runs are one deployment at one address: the IdTokens' audience.
    const sameAddress = { SCANHUB_PUBLIC_URL: 'http://scanhub.test:8080' };
    const first = await serve(dataDir, sameAddress);
    const [, password] = first.process.stderr().match(/store it now\): (\S+)\n/) ?? [];
    const token = ((await login(first.url, 'admin@localhost', password!)).body as { id_token: string }).id_token;
    expect(await stop(first.process)).toEqual({ code: 0, signal: null });

    const second = await serve(dataDir, sameAddress);
    expect(second.process.stderr()).toBe(`scanhub is serving ${second.url} (MQTT over TLS on port ${second.mqttPort}); Ctrl-C stops it.\n`);
    expect((await login(second.url, 'admin@localhost', password!)).status).toBe(200);
    // A token of the first run still verifies: the key pair was kept.
    expect((await call(second.url, 'GET', '/default/me', { token })).status).toBe(200);
  });

  it('SCANHUB_ADMIN_PASSWORD, _EMAIL and _CUSTOMER_ID are used and nothing secret is printed; SIGINT stops it too', async () => {
    const { process, url } = await serve(freshDataDir(), {
      SCANHUB_ADMIN_PASSWORD: 'chosen-by-the-operator',
      SCANHUB_ADMIN_EMAIL: 'ops@example.com',
      SCANHUB_CUSTOMER_ID: 'plant-7',
    });
    expect(process.stderr()).not.toContain('password');
    expect(process.stderr()).toContain('Created customer "plant-7" with administrator ops@example.com.\n');
    expect(await login(url, 'ops@example.com', 'chosen-by-the-operator')).toMatchObject({ status: 200, body: { customer_id: 'plant-7' } });
    process.child.kill('SIGINT');
    expect(await process.exited).toEqual({ code: 0, signal: null });
  });

  it('a SIGTERM while it starts: finishes starting, prints the generated password, exits 0, and that password logs in afterwards', async () => {
    const dataDir = freshDataDir();
    const process = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(await freePort())], { SCANHUB_LOG_LEVEL: 'info' });
    started.push(process);
    // fastify's "Server listening" comes while the MQTT broker and its threads still start.
    const stdout = process.child.stdout!;
    await new Promise<void>((resolve) => {
      const check = () => {
        if (!process.stdout().includes('"msg":"Server listening at ')) return;
        stdout.off('data', check);
        resolve();
      };
      stdout.on('data', check);
      check();
    });
    process.child.kill('SIGTERM');
    expect(await process.exited).toEqual({ code: 0, signal: null });
    const [, password] = process.stderr().match(/^Created customer "default" with administrator admin@localhost\.\nGenerated administrator password \(shown once, store it now\): (\S+)\n/) ?? [];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(process.stdout()).toMatch(/"signal":"SIGTERM","msg":"shutting down"/);

    const again = await serve(dataDir);
    expect(again.process.stderr()).not.toContain('password');
    expect(await login(again.url, 'admin@localhost', password!)).toMatchObject({ status: 200, body: { customer_id: 'default' } });
  });

  it('takes data directory and ports from SCANHUB_DATA_DIR, SCANHUB_PORT and SCANHUB_MQTT_PORT', async () => {
    const dataDir = freshDataDir();
    const { url } = await serve(dataDir, { SCANHUB_ADMIN_PASSWORD: 'chosen-by-the-operator' }, true);
    expect((await call(url, 'GET', '/healthz')).status).toBe(200);
    expect(mode(join(dataDir, 'scanhub.db'))).toBe(0o600);
  });

  it('a SCANHUB_ADMIN_PASSWORD under 12 characters: exit 1 before creating anyone', async () => {
    const port = await freePort();
    const process = spawnServe(['--data-dir', freshDataDir(), '--port', String(port), '--mqtt-port', String(await freePort())], {
      SCANHUB_ADMIN_PASSWORD: 'short',
    });
    started.push(process);
    expect(await process.exited).toEqual({ code: 1, signal: null });
    expect(process.stderr()).toBe('scanhub: SCANHUB_ADMIN_PASSWORD must have at least 12 characters\n');
  });

  it('a port in use: exit 1 naming the address and the flag that moves it', async () => {
    const { port } = await serve(freshDataDir(), { SCANHUB_ADMIN_PASSWORD: 'chosen-by-the-operator' });
    const clash = spawnServe(['--data-dir', freshDataDir(), '--port', String(port), '--mqtt-port', String(await freePort())], {
      SCANHUB_ADMIN_PASSWORD: 'chosen-by-the-operator',
    });
    started.push(clash);
    expect(await clash.exited).toEqual({ code: 1, signal: null });
    expect(clash.stderr()).toContain(
      `scanhub: the HTTP port 127.0.0.1:${port} is in use (another scanhub serve?): stop what uses it, or choose another port with --port\n`,
    );
  });

  it('a first start whose MQTT port is in use: exit 1, and the administrator it created and the generated password are still shown', async () => {
    const dataDir = freshDataDir();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const mqttPort = (taken.address() as AddressInfo).port;
    try {
      const failed = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(mqttPort)]);
      started.push(failed);
      expect(await failed.exited).toEqual({ code: 1, signal: null });
      const [, password] = failed.stderr().match(/Generated administrator password \(shown once, store it now\): (\S+)\n/) ?? [];
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(failed.stderr()).toBe(
        'Created customer "default" with administrator admin@localhost.\n' +
          `Generated administrator password (shown once, store it now): ${password}\n` +
          `scanhub: the MQTT port 127.0.0.1:${mqttPort} is in use (another scanhub serve?): stop what uses it, or choose another port with --mqtt-port\n`,
      );
      // The next start creates no one: the password shown is the administrator's.
      const again = await serve(dataDir);
      expect(again.process.stderr()).not.toContain('password');
      expect(await login(again.url, 'admin@localhost', password!)).toMatchObject({ status: 200, body: { customer_id: 'default' } });
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it.each([
    ['SCANHUB_CUSTOMER_ID', 'bad id!', 'scanhub: SCANHUB_CUSTOMER_ID: "bad id!" is not a valid customer id: use 1-64 letters, digits, ".", "_" or "-"\n'],
    ['SCANHUB_CUSTOMER_ID', 'Downloads', 'scanhub: SCANHUB_CUSTOMER_ID: "Downloads" is a path of the service itself and cannot be a customer id: choose another name (reserved: api-keys, assets, auth, downloads, healthz, metrics, openapi.json, provisioning)\n'],
    ['SCANHUB_ADMIN_EMAIL', 'notanemail', 'scanhub: SCANHUB_ADMIN_EMAIL: "notanemail" is not an e-mail address\n'],
    ['SCANHUB_LOG_LEVEL', 'banana', 'scanhub: SCANHUB_LOG_LEVEL: "banana" is not one of fatal, error, warn, info, debug, trace, silent\n'],
    [
      'SCANHUB_PUBLIC_URL',
      'notaurl',
      `error: option '--public-url <url>' value 'notaurl' from env 'SCANHUB_PUBLIC_URL' is invalid. "notaurl" is not an absolute URL such as https://scanhub.example.com.\n(run with --help for usage)\n`,
    ],
    [
      'SCANHUB_PUBLIC_URL',
      'ftp://files.example.com',
      `error: option '--public-url <url>' value 'ftp://files.example.com' from env 'SCANHUB_PUBLIC_URL' is invalid. "ftp://files.example.com" is not an http or https URL.\n(run with --help for usage)\n`,
    ],
  ])('%s=%s: exit 2 before the data directory is created', async (name, value, message) => {
    const dataDir = freshDataDir();
    const process = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', String(await freePort())], { [name]: value });
    started.push(process);
    expect(await process.exited).toEqual({ code: 2, signal: null });
    expect(process.stderr()).toBe(message);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('a --public-url with a query: exit 2', async () => {
    const process = spawnServe(['--public-url', 'https://scanhub.example.com/?a=1']);
    expect(await process.exited).toEqual({ code: 2, signal: null });
    expect(process.stderr()).toBe(
      `error: option '--public-url <url>' argument 'https://scanhub.example.com/?a=1' is invalid. "https://scanhub.example.com/?a=1" must not carry a query, a fragment or credentials.\n(run with --help for usage)\n`,
    );
  });

  it.each([
    ['--auth-rate-limit', '0'],
    ['--provisioning-rate-limit', 'many'],
  ])('%s %s: exit 2', async (flag, value) => {
    const process = spawnServe([flag, value]);
    expect(await process.exited).toEqual({ code: 2, signal: null });
    expect(process.stderr()).toBe(`error: option '${flag} <n>' argument '${value}' is invalid. "${value}" is not a number of requests a minute (1-1000000).\n(run with --help for usage)\n`);
  });

  it('SCANHUB_AUTH_RATE_LIMIT and --provisioning-rate-limit set the per-address limits: the next call is 429', async () => {
    const dataDir = freshDataDir();
    const { url } = await serve(dataDir, { SCANHUB_AUTH_RATE_LIMIT: '2' });
    expect((await login(url, 'admin@localhost', 'wrong-password-123')).status).toBe(401);
    expect((await login(url, 'admin@localhost', 'wrong-password-123')).status).toBe(401);
    const limited = await login(url, 'admin@localhost', 'wrong-password-123');
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ title: 'Too Many Requests', details: expect.stringMatching(/^More than 2 requests a minute from 127\.0\.0\.1 to POST \/auth\/login: retry in \d+ seconds\.$/) });

    const port = await freePort();
    const second = spawnServe(['--data-dir', freshDataDir(), '--port', String(port), '--mqtt-port', String(await freePort()), '--provisioning-rate-limit', '1']);
    started.push(second);
    await second.stderrMatches(/scanhub is serving .*\n/);
    const redeem = () => call(`http://127.0.0.1:${port}`, 'POST', '/provisioning', { json: { token: 'x'.repeat(43) } });
    expect((await redeem()).status).toBe(403);
    const refused = await redeem();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ title: 'Too Many Requests', details: expect.stringMatching(/^More than 1 requests a minute from 127\.0\.0\.1 to POST \/provisioning: retry in \d+ seconds\.$/) });
  });

  it('a bad --port: exit 2', async () => {
    const process = spawnServe(['--port', 'eighty']);
    expect(await process.exited).toEqual({ code: 2, signal: null });
    expect(process.stderr()).toBe(`error: option '--port <port>' argument 'eighty' is invalid. "eighty" is not a port number (0-65535).\n(run with --help for usage)\n`);
  });
});

describe('serve on every address (0.0.0.0)', () => {
  const plainHttpWarning =
    'warning: the API listens on 0.0.0.0 over plain HTTP, so passwords, tokens and gateway keys cross the network in clear text: serve HTTPS with --tls-cert/--tls-key or --https.\n';

  /** `serve --host 0.0.0.0` as a process on free ports, with the admin's token once it serves. */
  async function serveOnEveryAddress(extra: string[]) {
    const port = await freePort();
    const mqttPort = await freePort();
    const args = ['--data-dir', freshDataDir(), '--host', '0.0.0.0', '--port', String(port), '--mqtt-port', String(mqttPort), ...extra];
    const process = spawnServe(args, { SCANHUB_ADMIN_PASSWORD: 'chosen-by-the-operator' });
    started.push(process);
    await process.stderrMatches(/scanhub is serving .*\n/);
    const url = `http://127.0.0.1:${port}`;
    const token = ((await login(url, 'admin@localhost', 'chosen-by-the-operator')).body as { id_token: string }).id_token;
    return { process, url, port, mqttPort, token };
  }

  it('without --public-url: links use the machine name, and serve says so on start, naming --public-url', async () => {
    const { process, url, port, mqttPort, token } = await serveOnEveryAddress([]);
    await process.stderrMatches(/warning: .*\n/);
    expect(process.stderr()).toBe(
      'Created customer "default" with administrator admin@localhost.\n' +
        `scanhub is serving http://0.0.0.0:${port} (MQTT over TLS on port ${mqttPort}); Ctrl-C stops it.\n` +
        `--host 0.0.0.0 listens on every address, so links use http://${hostname()}:${port} and gateways are sent to MQTT host ${hostname()} ` +
        "(this machine's host name); if clients reach it by another name, set --public-url and --mqtt-public-host.\n" +
        plainHttpWarning,
    );
    const exported = await call(url, 'GET', '/default/events/export', { token });
    expect((exported.body as { download_link: string }).download_link.startsWith(`http://${hostname()}:${port}/downloads/exports/`)).toBe(true);
  });

  it('with --public-url and --mqtt-public-host: links use them and serve prints no notice (but the plain-HTTP warning)', async () => {
    const { process, url, port, mqttPort, token } = await serveOnEveryAddress(['--public-url', 'https://scanhub.example.com', '--mqtt-public-host', 'mqtt.example.com']);
    await process.stderrMatches(/warning: .*\n/);
    expect(process.stderr()).toBe(
      'Created customer "default" with administrator admin@localhost.\n' +
        `scanhub is serving http://0.0.0.0:${port} (MQTT over TLS on port ${mqttPort}); Ctrl-C stops it.\n` +
        plainHttpWarning,
    );
    const exported = await call(url, 'GET', '/default/events/export', { token });
    expect((exported.body as { download_link: string }).download_link.startsWith('https://scanhub.example.com/downloads/exports/')).toBe(true);
  });

  it('builds links and the MQTT endpoint on the machine name, not on 0.0.0.0', async () => {
    const server = await startServer({ dataDir: freshDataDir(), host: '0.0.0.0', port: 0, mqttPort: 0, customerId: 'default', adminEmail: 'admin@example.com', adminPassword: 'admin-password-123' });
    try {
      const port = new URL(server.url).port;
      expect(server.url).toBe(`http://0.0.0.0:${port}`);
      expect(server.ctx.config.publicUrl).toBe(`http://${hostname()}:${port}`);
      expect(server.ctx.config.mqttPublicHost).toBe(hostname());
    } finally {
      await server.close();
    }
  });
});

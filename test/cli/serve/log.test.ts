// `serve`'s log (README "Runtime contract"): short lines for a person on a terminal, pino's JSON
// lines when piped, `--log-format` / SCANHUB_LOG_FORMAT to choose. The terminal is a real
// pseudo-terminal (script(1)); the server runs as a process on whichever store the tests use.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { humanMessage } from '../../../src/cli/serve/log.js';
import { runCli, runOnTerminal } from '../../helpers/cli.js';
import { call } from '../../helpers/http.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../../helpers/test-store.js';

const PASSWORD = 'admin-password-123';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh data directory and database for one `serve`, removed after the test. */
async function deployment(): Promise<{ dataDir: string; database: TestDatabase; port: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-log-'));
  const database = await testDatabase();
  cleanups.push(async () => {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { dataDir, database, port: await freePort() };
}

/** `serve` with piped stdout; GET /healthz once it is up, then `during` with its URL, then SIGTERM. Its stdout. */
async function pipedServe(args: string[], env: Record<string, string> = {}, during?: (url: string) => Promise<void>): Promise<string> {
  const { dataDir, database, port } = await deployment();
  const serve: ServeProcess = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', ...args], { SCANHUB_ADMIN_PASSWORD: PASSWORD, ...env }, database);
  cleanups.push(async () => void (await stop(serve)));
  await serve.stderrMatches(/scanhub is serving/);
  expect((await call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status).toBe(200);
  await during?.(`http://127.0.0.1:${port}`);
  expect((await stop(serve)).code).toBe(0);
  return serve.stdout();
}

/**
 * `serve` on a pseudo-terminal (stdout and stderr both go to it): GET /healthz once it is up, then
 * Ctrl-C, as a person stops it. Everything the terminal showed, with its CRLF line ends made LF.
 */
async function serveOnTerminal(args: string[], requestLogged: RegExp): Promise<string> {
  const { dataDir, database, port } = await deployment();
  const terminal = runOnTerminal(['serve', '--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', ...args, ...database.args], {
    SCANHUB_ADMIN_PASSWORD: PASSWORD,
    ...database.env,
  });
  cleanups.push(() => terminal.kill());
  await terminal.shows(/Ctrl-C stops it/);
  expect((await call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status).toBe(200);
  // Logged once the response went out: wait for the line, so that it comes before the ^C.
  await terminal.shows(requestLogged);
  // The terminal turns Ctrl-C into SIGINT for serve, which drains and exits 0 (script passes its status on).
  terminal.type('\x03');
  expect(await terminal.exited).toBe(0);
  return terminal.output().replace(/\r\n/g, '\n');
}

/** The lines of pino's JSON output, parsed (every line must be JSON). */
const jsonLines = (stdout: string) => stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

describe('scanhub serve logs', () => {
  it('piped: pino\'s JSON lines, fastify\'s request lines included', async () => {
    const lines = jsonLines(await pipedServe([]));
    const listening = lines.find((line) => line.msg === 'scanhub listening')!;
    expect(Object.keys(listening)).toEqual(['level', 'time', 'pid', 'hostname', 'url', 'publicUrl', 'publicUrlSource', 'mqttPort', 'dataDir', 'gatewayKeyType', 'msg']);
    expect(listening).toMatchObject({ level: 30, pid: expect.any(Number), publicUrlSource: 'host' });
    const request = lines.filter((line) => line.reqId === 'req-1').map((line) => line.msg);
    expect(request).toEqual(['incoming request', 'request completed']);
    expect(lines.find((line) => line.msg === 'request completed')).toMatchObject({ res: { statusCode: 200 }, responseTime: expect.any(Number) });
    expect(lines.find((line) => line.msg === 'MQTT broker closed')).toMatchObject({ level: 30, mqtt: { connected: 0 } });
  });

  it.each([
    ['--log-format pretty', ['--log-format', 'pretty'], {}],
    ['SCANHUB_LOG_FORMAT=pretty', [], { SCANHUB_LOG_FORMAT: 'pretty' }],
  ])('piped with %s: short lines, one per request, no colour', async (_name, args, env) => {
    const stdout = await pipedServe(args, env);
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: scanhub listening url=http:\/\/127\.0\.0\.1:\d+ publicUrl=http:\/\/127\.0\.0\.1:\d+ publicUrlSource=host mqttPort=\d+ dataDir=\S+ gatewayKeyType=ec-p256\n/m);
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/healthz 200 \d+\.\dms reqId=req-1 route=\/healthz\n/m);
    expect(stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: shutting down signal=SIGTERM\n/m);
    expect(stdout).not.toContain('incoming request');
    expect(stdout).not.toContain('{"level"');
    expect(stdout).not.toContain('\x1b[');
  });

  it.each([['json'], ['pretty']])('--log-format %s: signed links and credentials in a query are redacted', async (format) => {
    const secrets: string[] = [];
    const stdout = await pipedServe(['--log-format', format], { SCANHUB_CUSTOMER_ID: 'acme' }, async (url) => {
      const login = await call(url, 'POST', '/auth/login', { json: { email: 'admin@localhost', password: PASSWORD } });
      const token = (login.body as { id_token: string }).id_token;
      const made = await call(url, 'POST', '/acme/create-provisioning-package', {
        token,
        json: { gateways: [{ gateway_name: 'dock-1' }], wifi: { ssid: 'floor', password: 'wifi-secret-password' } },
      });
      const link = new URL((made.body as { gateways: { package_url: string }[] }).gateways[0]!.package_url);
      const document = await call(url, 'GET', link.pathname + link.search);
      expect(document.status).toBe(200);
      const provisioningToken = (document.body as { token: string }).token;
      secrets.push(link.searchParams.get('signature')!, provisioningToken, 'wifi-secret-password', token);
      // A credential someone put in a query by mistake.
      expect((await call(url, 'GET', `/healthz?token=${provisioningToken}`)).status).toBe(200);
    });
    expect(secrets).toHaveLength(4);
    for (const secret of secrets) expect(stdout).not.toContain(secret);
    expect(stdout).toContain('/downloads/');
    expect(stdout).toContain('?[redacted]');
    expect(stdout).toContain('/healthz?token=[redacted]');
  });

  it('on a terminal: short lines by default', async () => {
    const pretty = await serveOnTerminal([], /route=\/healthz/);
    expect(pretty).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: scanhub listening url=http:\/\/127\.0\.0\.1:\d+ /m);
    expect(pretty).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/healthz 200 \d+\.\dms reqId=req-1 route=\/healthz$/m);
    // The terminal echoes the Ctrl-C as ^C before serve's line.
    expect(pretty).toMatch(/^\^C\[\d\d:\d\d:\d\d\.\d{3}\] INFO: shutting down signal=SIGINT$/m);
    expect(pretty).toContain('scanhub is serving http://127.0.0.1:');
    expect(pretty).not.toContain('{"level"');
  });

  it('on a terminal with --log-format json: JSON lines', async () => {
    const json = await serveOnTerminal(['--log-format', 'json'], /"msg":"request completed"/);
    const logLines = json.split('\n').map((line) => line.replace(/^\^C/, '')).filter((line) => line.startsWith('{'));
    expect(logLines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual(expect.arrayContaining(['scanhub listening', 'incoming request', 'request completed', 'shutting down']));
  });

  it('refuses a format it does not know, from the flag or the environment (exit 2)', async () => {
    const flag = await runCli(['serve', '--log-format', 'xml']);
    expect({ code: flag.code, stderr: flag.stderr.split('\n')[0] }).toEqual({
      code: 2,
      stderr: "error: option '--log-format <format>' argument 'xml' is invalid. Allowed choices are pretty, json.",
    });
    const env = await runCli(['serve'], { env: { SCANHUB_LOG_FORMAT: 'yaml' } });
    expect({ code: env.code, stderr: env.stderr.split('\n')[0] }).toEqual({
      code: 2,
      stderr: "error: option '--log-format <format>' value 'yaml' from env 'SCANHUB_LOG_FORMAT' is invalid. Allowed choices are pretty, json.",
    });
  });
});

describe('scanhub serve whose log reader goes away', () => {
  it('exits within 10 s of SIGTERM when the reader stopped reading and then died with lines buffered', async () => {
    const { dataDir, database, port } = await deployment();
    const serve = spawnServe(['--data-dir', dataDir, '--port', String(port), '--mqtt-port', '0', '--log-format', 'json'], { SCANHUB_ADMIN_PASSWORD: PASSWORD }, database);
    cleanups.push(async () => {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
      await serve.exited;
    });
    await serve.stderrMatches(/scanhub is serving/);
    // A reader that stops reading: the pipe fills and the log's writes wait for it.
    serve.child.stdout!.removeAllListeners('data');
    serve.child.stdout!.pause();
    const url = `http://127.0.0.1:${port}`;
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(Array.from({ length: 200 }, () => call(url, 'GET', `/healthz?padding=${'x'.repeat(400)}`)));
      expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 200 }, () => 200));
    }
    serve.child.kill('SIGTERM');
    // ... and then dies, as a log pipe killed along with serve does.
    serve.child.stdout!.destroy();
    // A bound, not a wait: a serve stuck on its log would never exit, and the test says so.
    const deadline = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 10_000).unref());
    const exit = await Promise.race([serve.exited, deadline]);
    expect(exit).toEqual({ code: 0, signal: null });
  });
});

describe('a log record as a person reads it', () => {
  it.each([
    ['a request', { level: 30, msg: 'request completed', reqId: 'req-7', res: { statusCode: 404, method: 'GET', url: '/acme/gateways/x', route: '/:customer_id/gateways/:gateway_id' }, responseTime: 2.345 }, 'GET /acme/gateways/x 404 2.3ms reqId=req-7 route=/:customer_id/gateways/:gateway_id'],
    ['fields, quoted where they have spaces', { level: 40, msg: 'MQTT publish refused, connection closed', gateway_id: 'g-1', remote: '10.0.0.9', reason: 'payload of 300000 bytes exceeds 262144', component: 'mqtt' }, 'MQTT publish refused, connection closed gateway_id=g-1 remote=10.0.0.9 reason="payload of 300000 bytes exceeds 262144"'],
    ['counters without their zeros', { level: 30, msg: 'ingest closed', ingest: { messages: 5, events: 4, invalid: 0, failed: 1 } }, 'ingest closed ingest={"messages":5,"events":4,"failed":1}'],
    ['a warning with an error: its message', { level: 40, msg: 'request refused: database unavailable', reqId: 'req-2', err: { type: 'Error', message: 'connection refused', stack: 'Error: connection refused\n    at x' } }, 'request refused: database unavailable reqId=req-2 err="connection refused"'],
    ['an error: its stack under the line', { level: 50, msg: 'request failed', err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (a.js:1:1)' } }, 'request failed err=boom\n    Error: boom\n        at f (a.js:1:1)'],
  ])('%s', (_name, record, shown) => {
    expect(humanMessage(record)).toBe(shown);
  });
});

import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runOnTerminal } from '../../helpers/cli.js';
import { freePort, spawnServe, stop, type ServeProcess } from '../../helpers/serve-process.js';
import { testDatabase, type TestDatabase } from '../../helpers/test-store.js';

const PASSWORD = 'https-client-password';
let work: string;
let serve: ServeProcess;
let database: TestDatabase;
let url: string;
let caFile: string;
let caFingerprint: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'scanhub-https-client-'));
  database = await testDatabase();
  const dataDir = join(work, 'data');
  serve = spawnServe(['--data-dir', dataDir, '--port', String(await freePort()), '--mqtt-port', '0', '--https'], { SCANHUB_ADMIN_PASSWORD: PASSWORD }, database);
  url = (await serve.stderrMatches(/scanhub is serving (\S+) /))[1]!;
  const ca = await runCli(['operator', 'ca', '--data-dir', dataDir, ...database.args], { env: database.env });
  caFile = join(work, 'ca.pem');
  writeFileSync(caFile, ca.stdout);
  caFingerprint = ca.stderr.replace('SHA-256 fingerprint: ', '').trim();
});
afterAll(async () => {
  await stop(serve);
  await database.drop();
  rmSync(work, { recursive: true, force: true });
});

/** A config directory of the test's own: a profile saved by one run is read by the next. */
const configHome = () => mkdtempSync(join(work, 'config-'));
const profileOf = (home: string) => JSON.parse(readFileSync(join(home, 'scanhub', 'profile.json'), 'utf8')) as { url: string; ca_cert?: string };
const fingerprintOf = (pem: string) => new X509Certificate(pem).fingerprint256;
const UNTRUSTED = () =>
  `scanhub: the certificate of ${url} is not trusted (SELF_SIGNED_CERT_IN_CHAIN): pass --ca-cert with the deployment's CA (\`scanhub operator ca\` prints it) or set SCANHUB_CA_CERT\n`;

describe('clients of an HTTPS deployment', () => {
  it('login --ca-cert saves the CA in the profile; later commands trust it without the flag', async () => {
    const home = configHome();
    const env = { XDG_CONFIG_HOME: home };
    const login = await runCli(['login', '--url', url, '--email', 'admin@localhost', '--password-stdin', '--ca-cert', caFile], { env, input: `${PASSWORD}\n` });
    expect({ code: login.code, stderr: login.stderr }).toEqual({ code: 0, stderr: expect.stringMatching(/^Logged in to https:\/\/127\.0\.0\.1:\d+ as admin@localhost/) });
    expect(fingerprintOf(profileOf(home).ca_cert!)).toBe(caFingerprint);
    const whoami = await runCli(['whoami', '--json'], { env });
    expect({ code: whoami.code, email: (JSON.parse(whoami.stdout) as { email: string }).email }).toEqual({ code: 0, email: 'admin@localhost' });
  });

  it('SCANHUB_CA_CERT does what --ca-cert does', async () => {
    const login = await runCli(['login', '--url', url, '--email', 'admin@localhost', '--password-stdin'], {
      env: { XDG_CONFIG_HOME: configHome(), SCANHUB_CA_CERT: caFile },
      input: `${PASSWORD}\n`,
    });
    expect(login.code).toBe(0);
  });

  it('piped, without the CA: login and other commands refuse naming --ca-cert (exit 1), nothing saved', async () => {
    const home = configHome();
    const login = await runCli(['login', '--url', url, '--email', 'admin@localhost', '--password-stdin'], { env: { XDG_CONFIG_HOME: home }, input: `${PASSWORD}\n` });
    expect({ code: login.code, stdout: login.stdout, stderr: login.stderr }).toEqual({ code: 1, stdout: '', stderr: UNTRUSTED() });
    const whoami = await runCli(['whoami', '--url', url, '--token', 'x.y.z', '--customer', 'default'], { env: { XDG_CONFIG_HOME: home } });
    expect({ code: whoami.code, stderr: whoami.stderr }).toEqual({ code: 1, stderr: UNTRUSTED() });
    expect(() => profileOf(home)).toThrow(/ENOENT/);
  });

  it.each([
    ['a file that does not exist', 'missing.pem', (f: string) => `scanhub: --ca-cert: "${f}" does not exist\n`],
    ['a file that is no PEM certificate', 'not-a-cert.pem', (f: string) => `scanhub: --ca-cert: "${f}" is not a PEM certificate\n`],
  ])('--ca-cert with %s: exit 2', async (_name, name, message) => {
    const file = join(work, name);
    if (name === 'not-a-cert.pem') writeFileSync(file, 'hello\n');
    const login = await runCli(['login', '--url', url, '--email', 'admin@localhost', '--password-stdin', '--ca-cert', file], { env: { XDG_CONFIG_HOME: configHome() }, input: `${PASSWORD}\n` });
    expect({ code: login.code, stderr: login.stderr }).toEqual({ code: 2, stderr: message(file) });
  });

  it('on a TTY, login shows the CA fingerprint and, once accepted, saves the CA (trust on first use)', async () => {
    const home = configHome();
    const { code, output } = await loginOnTty(home, 'y');
    expect(code).toBe(0);
    expect(output).toContain(`SHA-256 fingerprint ${caFingerprint}\r\n`);
    expect(output).toMatch(/Logged in to https:\/\/127\.0\.0\.1:\d+ as admin@localhost/);
    expect(fingerprintOf(profileOf(home).ca_cert!)).toBe(caFingerprint);
    const whoami = await runCli(['whoami', '--json'], { env: { XDG_CONFIG_HOME: home } });
    expect(whoami.code).toBe(0);
  });

  it('on a TTY, declining the CA cancels the login (exit 2) and saves nothing', async () => {
    const home = configHome();
    const { code, output } = await loginOnTty(home, 'n');
    expect(code).toBe(2);
    expect(output).toContain('scanhub: cancelled');
    expect(() => profileOf(home)).toThrow(/ENOENT/);
  });
});

/** `scanhub login` on a pseudo-terminal (script(1)): types the password, then answers the trust question. */
async function loginOnTty(home: string, answer: 'y' | 'n'): Promise<{ code: number | null; output: string }> {
  const terminal = runOnTerminal(['login', '--url', url, '--email', 'admin@localhost'], { XDG_CONFIG_HOME: home });
  await terminal.shows(/Password/);
  terminal.type(`${PASSWORD}\r`);
  await terminal.shows(/Trust this CA/);
  terminal.type(`${answer}\r`);
  return { code: await terminal.exited, output: terminal.output() };
}

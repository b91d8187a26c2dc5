// Mosquitto beside scanhub in the benchmarks (ingest-vs-mosquitto, reconnect-storm): Debian's
// binary (apt-get install when missing, as root), TLS with client certificates required, no
// persistence, its default logging drained from a pipe. It trusts scanhub's deployment CA and
// presents scanhub's own MQTT server certificate, so the very same device credentials and
// handshakes are measured against both. Also here: the bare node:tls responder
// (bench/bare-tls-broker.js), the floor of Node's own TLS, started the same way.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, terminate } from './lib.js';

/** The Mosquitto binary, installed with apt-get when missing; undefined with the reason printed. */
export function mosquittoBinary(bench) {
  const find = () => ['/usr/sbin/mosquitto', '/usr/bin/mosquitto'].find((path) => spawnSync(path, ['-h']).error === undefined);
  let binary = find();
  if (!binary && process.getuid?.() === 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'mosquitto'], { stdio: 'ignore', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    binary = find();
  }
  if (!binary) console.error(`${bench}: Mosquitto side skipped: no mosquitto binary, and ${process.getuid?.() === 0 ? 'apt-get install mosquitto failed' : 'not root to apt-get install it'}`);
  return binary;
}


/** Mosquitto on a free port with scanhub's CA and MQTT server pair; resolves once it listens. */
export async function startMosquitto(binary, dataDir) {
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-bench-mosquitto-'));
  for (const name of ['ca.crt', 'server.crt', 'server.key']) copyFileSync(join(dataDir, 'pki', name), join(dir, name));
  const port = await freePort();
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    [
      'user root',
      'persistence false',
      'log_dest stderr',
      `listener ${port} 127.0.0.1`,
      `cafile ${join(dir, 'ca.crt')}`,
      `certfile ${join(dir, 'server.crt')}`,
      `keyfile ${join(dir, 'server.key')}`,
      'require_certificate true',
      'use_identity_as_username true',
      '',
    ].join('\n'),
  );
  const child = spawn(binary, ['-c', join(dir, 'mosquitto.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`mosquitto did not start: ${stderr}`))), 15_000);
    child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`mosquitto exited with ${code}: ${stderr}`))));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (/Opening ipv4 listen socket|mosquitto version [\d.]+ running/.test(stderr)) clearTimeout(timer), resolve();
    });
  });
  // Keep draining its log, as a user's journal would.
  child.stderr.resume();
  return {
    port,
    pid: child.pid,
    async stop() {
      await terminate(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** bench/bare-tls-broker.js (Node's own TLS and nothing else) on a free port, with the deployment's CA and server pair. */
export async function startBareTls(dataDir) {
  const child = spawn(process.execPath, [new URL('./bare-tls-broker.js', import.meta.url).pathname, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare-tls-broker exited with ${code}`)));
    child.stdout.once('data', (chunk) => resolve(Number(String(chunk).trim())));
  });
  return {
    port,
    pid: child.pid,
    stop: () => terminate(child),
  };
}

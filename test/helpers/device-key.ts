import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Keys `openssl req -newkey` makes: the two the service signs and some it refuses. */
export type DeviceKeyKind = 'ec-p256' | 'rsa-2048' | 'ec-p384' | 'rsa-1024' | 'rsa-4096' | 'ed25519';

const NEWKEY: Record<DeviceKeyKind, string[]> = {
  'ec-p256': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  'ec-p384': ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  'rsa-2048': ['-newkey', 'rsa:2048'],
  'rsa-1024': ['-newkey', 'rsa:1024'],
  'rsa-4096': ['-newkey', 'rsa:4096'],
  ed25519: ['-newkey', 'ed25519'],
};

/** A device's own key and its certificate request, as docs/gateways.md tells a device maker to make them. */
export interface DeviceKey {
  /** The folder holding device.key and device.csr. */
  dir: string;
  keyPem: string;
  csrPem: string;
}

/**
 * `openssl req -new -newkey ... -nodes` in a new folder under `root`: a key that never leaves the
 * device and a request with a subject and extensions of its own (which the service ignores).
 */
export function opensslDeviceKey(root: string, kind: DeviceKeyKind): DeviceKey {
  const dir = mkdtempSync(join(root, `device-${kind}-`));
  execFileSync(
    'openssl',
    ['req', '-new', ...NEWKEY[kind], '-nodes', '-keyout', 'device.key', '-out', 'device.csr', '-subj', '/CN=chosen-by-the-device/O=Device Maker', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'subjectAltName=DNS:evil.example'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { dir, keyPem: readFileSync(join(dir, 'device.key'), 'utf8'), csrPem: readFileSync(join(dir, 'device.csr'), 'utf8') };
}

/** `openssl x509 -noout -text` of a PEM certificate. */
export function opensslText(certificatePem: string): string {
  return execFileSync('openssl', ['x509', '-noout', '-text'], { input: certificatePem, encoding: 'utf8' });
}

/**
 * A stock `mosquitto_pub` publishing one message at QoS 1 with the device's key, the certificate
 * and the CA (PEM files in `dir`): its exit code and stderr.
 */
export function mosquittoPublish(
  dir: string,
  files: { keyPem: string; certificatePem: string; caPem: string },
  target: { port: number | string; topic: string; message: string },
): Promise<{ code: number | null; stderr: string }> {
  writeFileSync(join(dir, 'pub.key'), files.keyPem, { mode: 0o600 });
  writeFileSync(join(dir, 'pub.crt'), files.certificatePem);
  writeFileSync(join(dir, 'ca.crt'), files.caPem);
  const args = ['-h', 'localhost', '-p', String(target.port), '--cafile', 'ca.crt', '--cert', 'pub.crt', '--key', 'pub.key', '-q', '1', '-t', target.topic, '-m', target.message];
  return new Promise((resolve) => {
    const child = spawn('mosquitto_pub', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

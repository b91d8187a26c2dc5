// Provisioning at fleet scale (bench/README.md "provisioning"): prepare-provisioning and
// POST /provisioning per second, 500 gateways through packages end to end, and in this process the
// CPU of each part, per gateway key type, a fresh `serve` each run.
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { api, median, report } from './lib.js';
import { startServeProcess } from './events-data.js';

const BENCH = 'provisioning';
const CUSTOMER = 'default';
const EMAIL = 'admin@bench.local';
const PASSWORD = 'bench-password-123';
const RUNS = Number(process.env.PROVISIONING_RUNS ?? 3);
const CONCURRENCY = Number(process.env.PROVISIONING_CONCURRENCY ?? 40);
/** Gateways prepared and redeemed one by one per run: RSA is slow, so it gets fewer. */
const GATEWAYS = { 'ec-p256': Number(process.env.PROVISIONING_GATEWAYS ?? 1000), 'rsa-2048': Number(process.env.PROVISIONING_RSA_GATEWAYS ?? 200) };
const PACKAGE_GATEWAYS = Number(process.env.PROVISIONING_PACKAGE_GATEWAYS ?? 500);
const PACKAGE_CAP = 100;
const PACKAGE_CALLS_IN_FLIGHT = 2;
const KEY_TYPES = (process.env.PROVISIONING_KEY_TYPES ?? 'ec-p256,rsa-2048').split(',');
const TARGET = { prepared: 300, redeemed: 300, package_seconds: 5 };
/** Redemptions with a certificate request too (EC only): a build before them refuses the field. */
const CSR = process.env.PROVISIONING_CSR !== '0';

const dispatcher = new Agent({ connections: CONCURRENCY * 2, pipelining: 1 });

let devices = 0;
/**
 * A device's own address, as a balancer in front of serve would forward it: POST /provisioning is
 * limited per address (60 a minute), and a fleet redeems from many addresses, one call each.
 */
function deviceAddress() {
  const n = ++devices;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

/** One JSON call over the shared keep-alive pool (a device's when `token` is undefined); throws on an error answer. */
async function call(url, method, path, token, body) {
  const response = await request(url + path, {
    method,
    dispatcher,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : { 'x-forwarded-for': deviceAddress() }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode >= 400) throw new Error(`${method} ${path.slice(0, 80)}: ${response.statusCode} ${text}`);
  return JSON.parse(text);
}

/** Runs `task` over the items with at most `limit` in flight. */
async function inFlight(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index], index);
      }
    }),
  );
  return results;
}

/** A serve process for one key type over a fresh data directory, logged in. */
async function startServer(keyType) {
  const dataDir = mkdtempSync(join(tmpdir(), 'scanhub-bench-provisioning-'));
  process.env.SCANHUB_GATEWAY_KEY_TYPE = keyType;
  const server = await startServeProcess(dataDir);
  const { id_token: token } = await api(server.url, 'POST', '/auth/login', undefined, { email: EMAIL, password: PASSWORD });
  return {
    ...server,
    token,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Creates `count` gateways (bulk-create, 100 a call); their ids. */
async function createGateways(server, count, prefix) {
  const ids = [];
  for (let first = 0; first < count; first += 100) {
    const gateways = Array.from({ length: Math.min(100, count - first) }, (_, i) => ({ name: `${prefix}-${first + i}`, usecase: 'bench', station: 'bench' }));
    const created = await call(server.url, 'POST', `/${CUSTOMER}/gateways/bulk-create`, server.token, { gateways });
    ids.push(...created.map((g) => g.id));
  }
  return ids;
}

/** prepare-provisioning of every gateway, then POST /provisioning of every token: rates per second. */
async function oneByOne(server, count, prefix) {
  const ids = await createGateways(server, count, prefix);
  let started = performance.now();
  const tokens = await inFlight(ids, CONCURRENCY, async (id) => (await call(server.url, 'POST', `/${CUSTOMER}/gateways/${id}/prepare-provisioning`, server.token)).token);
  const prepared = count / ((performance.now() - started) / 1000);
  started = performance.now();
  await inFlight(tokens, CONCURRENCY, async (token) => {
    const answer = await call(server.url, 'POST', '/provisioning', undefined, { token });
    if (!answer.pkcs12) throw new Error('POST /provisioning answered without pkcs12');
  });
  const redeemed = count / ((performance.now() - started) / 1000);
  return { prepared, redeemed };
}

/** prepare-provisioning of `count` gateways, then POST /provisioning of each token with a certificate request of a device's own EC key: redemptions/s. */
async function withRequests(server, count) {
  const { createCertificateRequest } = await import('../dist/pki/csr.js');
  const ids = await createGateways(server, count, 'csr');
  const tokens = await inFlight(ids, CONCURRENCY, async (id) => (await call(server.url, 'POST', `/${CUSTOMER}/gateways/${id}/prepare-provisioning`, server.token)).token);
  const requests = ids.map((id) => createCertificateRequest(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey, id));
  const started = performance.now();
  await inFlight(tokens, CONCURRENCY, async (token, i) => {
    const answer = await call(server.url, 'POST', '/provisioning', undefined, { token, csr: requests[i] });
    if (!answer.certificate) throw new Error('POST /provisioning with a csr answered without a certificate');
  });
  return count / ((performance.now() - started) / 1000);
}

/** PACKAGE_GATEWAYS new gateways through package calls, each document fetched and redeemed: seconds. */
async function throughPackages(server) {
  const started = performance.now();
  const calls = [];
  for (let first = 0; first < PACKAGE_GATEWAYS; first += PACKAGE_CAP) {
    calls.push(Array.from({ length: Math.min(PACKAGE_CAP, PACKAGE_GATEWAYS - first) }, (_, i) => ({ gateway_name: `package-${first + i}` })));
  }
  let redeemed = 0;
  await inFlight(calls, PACKAGE_CALLS_IN_FLIGHT, async (gateways) => {
    const answer = await call(server.url, 'POST', `/${CUSTOMER}/create-provisioning-package`, server.token, { gateways });
    // Each device fetches its document and redeems its token as soon as its link exists.
    await inFlight(answer.gateways, CONCURRENCY / PACKAGE_CALLS_IN_FLIGHT, async ({ package_url }) => {
      const response = await request(package_url, { dispatcher });
      if (response.statusCode !== 200) throw new Error(`GET ${package_url}: ${response.statusCode}`);
      const document = await response.body.json();
      const redemption = await call(server.url, 'POST', document.registration_path, undefined, { token: document.token });
      if (!redemption.pkcs12) throw new Error('POST /provisioning answered without pkcs12');
      redeemed++;
    });
  });
  if (redeemed !== PACKAGE_GATEWAYS) throw new Error(`redeemed ${redeemed} of ${PACKAGE_GATEWAYS}`);
  return (performance.now() - started) / 1000;
}

// The bench stands in for the balancer (SCANHUB_TRUST_PROXY) that forwards each device's address.
Object.assign(process.env, { SCANHUB_TRUST_PROXY: '127.0.0.1', SCANHUB_ADMIN_EMAIL: EMAIL, SCANHUB_ADMIN_PASSWORD: PASSWORD, SCANHUB_CUSTOMER_ID: CUSTOMER, SCANHUB_LOG_LEVEL: 'warn' });

/** CPU (user + system, every thread) per call of `task`, over `count` calls `inFlight` at a time. */
async function cpuPerCall(count, task) {
  const before = process.cpuUsage();
  await inFlight(Array.from({ length: count }), 8, task);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}

/** The parts of one gateway's provisioning, in this process, per key type. */
async function components() {
  const { issueClientCertificate, issueClientCertificateAsync, loadOrCreateCa } = await import('../dist/pki/ca.js');
  const { generateKeysAsync, randomSerialHex } = await import('../dist/pki/keys.js');
  const { buildPkcs12 } = await import('../dist/pki/pkcs12.js');
  const { openGatewayKey, sealGatewayKey } = await import('../dist/pki/sealed-key.js');
  const { FileSecrets } = await import('../dist/store/sqlite/secrets.js');
  const dir = mkdtempSync(join(tmpdir(), 'scanhub-bench-pki-'));
  try {
    const ca = await loadOrCreateCa(new FileSecrets(dir));
    for (const keyType of KEY_TYPES) {
      const count = keyType === 'ec-p256' ? 2000 : 40;
      const issued = issueClientCertificate(ca, 'bench-gateway', randomSerialHex(), { keyType });
      buildPkcs12(issued.keyPem, issued.certPem, ca.certPem, 'bench-gateway'); // derives the process's keys once
      report(BENCH, `${keyType}_key_cpu_ms`, await cpuPerCall(count, () => generateKeysAsync(keyType)), 'ms');
      report(BENCH, `${keyType}_key_and_certificate_cpu_ms`, await cpuPerCall(count, () => issueClientCertificateAsync(ca, 'bench-gateway', randomSerialHex(), keyType)), 'ms');
      report(BENCH, `${keyType}_pkcs12_cpu_ms`, await cpuPerCall(2000, async () => buildPkcs12(issued.keyPem, issued.certPem, ca.certPem, 'bench-gateway')), 'ms');
      const token = 'bench-token-'.padEnd(43, 'x');
      report(BENCH, `${keyType}_seal_and_open_cpu_ms`, await cpuPerCall(2000, async () => openGatewayKey(sealGatewayKey(issued.keyPem, token, 'ab01'), token, 'ab01')), 'ms');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// PROVISIONING_COMPONENTS=0 skips them (a build before the key types has none of these functions).
if (process.env.PROVISIONING_COMPONENTS !== '0') await components();
const figures = Object.fromEntries(KEY_TYPES.map((type) => [type, { prepared: [], redeemed: [], package_seconds: [], redeemed_with_csr: [] }]));
for (let run = 0; run < RUNS; run++) {
  const order = run % 2 ? [...KEY_TYPES].reverse() : KEY_TYPES;
  for (const keyType of order) {
    const server = await startServer(keyType);
    try {
      // Warm-up: JIT, the first key of its kind, the first package file.
      await oneByOne(server, 20, 'warm-up');
      const { prepared, redeemed } = await oneByOne(server, GATEWAYS[keyType], 'one');
      figures[keyType].prepared.push(prepared);
      figures[keyType].redeemed.push(redeemed);
      figures[keyType].package_seconds.push(await throughPackages(server));
      if (CSR && keyType === 'ec-p256') figures[keyType].redeemed_with_csr.push(await withRequests(server, GATEWAYS[keyType]));
    } finally {
      await server.stop();
    }
  }
}
for (const keyType of KEY_TYPES) {
  const { prepared, redeemed, package_seconds } = figures[keyType];
  const ec = keyType === 'ec-p256';
  const spread = (values, digits) => `${Math.min(...values).toFixed(digits)}..${Math.max(...values).toFixed(digits)}`;
  const line = (metric, values, unit, target, cmp, digits) => {
    const value = median(values);
    const row = ec ? report(BENCH, `${keyType}_${metric}`, value, unit, target, cmp) : report(BENCH, `${keyType}_${metric}`, value, unit);
    console.log(JSON.stringify({ bench: BENCH, metric: `${keyType}_${metric}_spread`, value: spread(values, digits), unit, runs: values.length }));
    if (ec) report(BENCH, `${keyType}_${metric}_ratio_to_target`, cmp === '>=' ? value / target : target / value, 'x', 1, '>=');
    return row;
  };
  line(`prepared_per_s_${CONCURRENCY}_concurrent`, prepared, 'gateways/s', TARGET.prepared, '>=', 1);
  line(`redeemed_per_s_${CONCURRENCY}_concurrent`, redeemed, 'gateways/s', TARGET.redeemed, '>=', 1);
  line(`package_${PACKAGE_GATEWAYS}_gateways_seconds`, package_seconds, 's', TARGET.package_seconds, '<=', 2);
  const { redeemed_with_csr: withCsr } = figures[keyType];
  if (withCsr.length) {
    report(BENCH, `${keyType}_redeemed_with_csr_per_s_${CONCURRENCY}_concurrent`, median(withCsr), 'gateways/s');
    console.log(JSON.stringify({ bench: BENCH, metric: `${keyType}_redeemed_with_csr_per_s_spread`, value: spread(withCsr, 1), unit: 'gateways/s', runs: withCsr.length }));
  }
}
if (KEY_TYPES.length === 2) {
  for (const metric of ['prepared', 'redeemed']) {
    report(BENCH, `${metric}_ec_over_rsa`, median(figures['ec-p256'][metric]) / median(figures['rsa-2048'][metric]), 'x');
  }
  report(BENCH, 'package_rsa_over_ec_seconds', median(figures['rsa-2048'].package_seconds) / median(figures['ec-p256'].package_seconds), 'x');
}
await dispatcher.close();

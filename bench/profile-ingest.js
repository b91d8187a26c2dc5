// Not a benchmark (no .bench.js): runs `scanhub serve` under `node --cpu-prof` (every thread writes
// its own .cpuprofile into PROFILE_DIR) with the ingest load of ingest-vs-mosquitto, for profiling
// where the microseconds per message go. PROFILE_GATEWAYS (200), PROFILE_WINDOW (20), PROFILE_SECONDS (10).
import { mkdirSync } from 'node:fs';
import { forkGenerator, login, newDeployment, dropDeployment, startServe } from './stores-lib.js';
import { api } from './lib.js';

/** A rollout from one address: the per-address limit on POST /provisioning raised, as its operator would. */
const RATE_ARGS = ['--provisioning-rate-limit', '1000000'];
const dir = process.env.PROFILE_DIR ?? '/tmp/scanhub-profile';
mkdirSync(dir, { recursive: true });
const customer = 'bench';
const deployment = newDeployment('sqlite', undefined, { prefix: 'profile' });
let server = await startServe(deployment, { customer, args: RATE_ARGS });
const token = await login(server.url);
const count = Number(process.env.PROFILE_GATEWAYS ?? 200);
const list = [];
for (let i = 0; i < count; i++) {
  const gateway = await api(server.url, 'POST', `/${customer}/gateways`, token, { name: `p-${i}`, usecase: 'u', station: 's' });
  const { token: t } = await api(server.url, 'POST', `/${customer}/gateways/${gateway.id}/prepare-provisioning`, token);
  const { pkcs12 } = await api(server.url, 'POST', '/provisioning', undefined, { token: t });
  list.push({ id: gateway.id, topic: `scanhub/${customer}/gateway/${gateway.id}`, pfx: pkcs12 });
}
await server.stop();
server = await startServe(deployment, { customer, args: RATE_ARGS, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] });
const { readFileSync } = await import('node:fs');
const ca = { certPem: readFileSync(`${deployment.dataDir}/pki/ca.crt`, 'utf8') };
const generator = forkGenerator({ host: '127.0.0.1', port: server.mqttPort }, { ca, list }, { window: Number(process.env.PROFILE_WINDOW ?? 20), warmupSeconds: 2, seconds: Number(process.env.PROFILE_SECONDS ?? 10) });
await generator.next();
generator.start();
const result = await generator.next();
generator.kill();
console.error(`profiled: ${Math.round(result.ackedInWindow / (result.elapsedMs / 1000))} events/s, serve pid ${server.pid}; profiles in ${dir}`);
await server.stop();
dropDeployment(deployment);

// Job analysis of 1,000,000 events on SQLite and on PostgreSQL in one run, alternating
// (bench/README.md "stores-ingest, stores-events, stores-jobs"; target <= 1 s). PostgreSQL gets the
// jobs data set through the store seam.
import { SEED, event, gatewayId, seededDataDir, timedAnalysis } from './jobs-seed.js';
import { api, report } from './lib.js';
import { RUNS, dropDeployment, load, login, newDeployment, psql, startPostgres, startServe, summarize, withStore } from './stores-lib.js';

const BENCH = 'stores-jobs';
const kinds = (process.env.BENCH_STORES ?? 'sqlite,postgres').split(',');
const pg = kinds.includes('postgres') ? startPostgres(BENCH) : undefined;
const active = kinds.filter((kind) => kind === 'sqlite' || pg);

/** A fresh PostgreSQL deployment holding the data set of jobs-seed.js. */
async function seededPostgres() {
  const deployment = newDeployment('postgres', pg, { prefix: 'jobs' });
  const server = await startServe(deployment, { customer: SEED.customer, logLevel: 'warn' }); // creates the customer and administrator
  await server.stop();
  const started = performance.now();
  await withStore(deployment, async (store) => {
    const now = Date.now();
    await store.gateways.createAll(
      SEED.customer,
      Array.from({ length: SEED.gateways }, (_, g) => ({ id: gatewayId(g), name: `gateway-${g}`, usecase: 'packing', station: `station-${g}` })),
      now,
    );
    const chunk = [];
    for (let i = 0; i < SEED.eventsPerGateway; i++) {
      for (let g = 0; g < SEED.gateways; g++) chunk.push(event(g, i));
      if (chunk.length >= 50_000) await store.events.insert(SEED.customer, chunk.splice(0));
    }
    if (chunk.length) await store.events.insert(SEED.customer, chunk);
  });
  psql(deployment.url, 'VACUUM ANALYZE events');
  const count = Number(psql(deployment.url, 'SELECT count(*) FROM events'));
  console.error(`${BENCH}: seeded PostgreSQL with ${count} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return deployment;
}

async function jobConfigId(url, token) {
  const created = await api(url, 'POST', `/${SEED.customer}/job-configs`, token, {
    job_name: `bench-${Date.now()}`,
    start_barcode: SEED.startBarcode,
    end_barcode: SEED.endBarcode,
    gateway_ids: Array.from({ length: SEED.gateways }, (_, g) => gatewayId(g)),
  });
  return created.job_config_id;
}

const deployments = {};
const servers = {};
try {
  for (const kind of active) {
    deployments[kind] = kind === 'sqlite' ? newDeployment('sqlite', pg, { dataDir: await seededDataDir() }) : await seededPostgres();
    const server = await startServe(deployments[kind], { customer: SEED.customer, logLevel: 'warn' });
    const token = await login(server.url);
    servers[kind] = { server, url: server.url, token, id: await jobConfigId(server.url, token) };
    await timedAnalysis(servers[kind].url, servers[kind].token, servers[kind].id); // warm-up
  }
  const times = Object.fromEntries(active.map((kind) => [kind, []]));
  for (let run = 0; run < RUNS; run++) {
    for (const kind of active) {
      const seconds = await timedAnalysis(servers[kind].url, servers[kind].token, servers[kind].id);
      times[kind].push(seconds);
      console.error(`${BENCH}: ${kind}: ${seconds.toFixed(3)} s; load ${load()}`);
    }
  }
  summarize(BENCH, 'analysis_1M_events_seconds', 's', times, { target: 1 });
  report(BENCH, 'load_average_1m_at_end', Number(load().split(' ')[0]), 'load');
} finally {
  for (const { server } of Object.values(servers)) await server.stop();
  if (deployments.postgres) dropDeployment(deployments.postgres);
  pg?.stop();
}

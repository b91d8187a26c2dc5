import { scenarioTable, type Scenario } from '../../helpers/scenarios.js';
import { CUSTOMER } from '../../helpers/server.js';
import { OTHER_CUSTOMER, startFoundation, type Foundation } from '../../helpers/world.js';

/** Sets flags as the operator command does: straight in the deployment's store. */
async function setFlags(w: Foundation): Promise<void> {
  const { store: { features }, clock } = w.t.server.ctx;
  await features.set(CUSTOMER, 'scan-heatmap', true, { colours: 3, beta: true }, clock());
  await features.set(CUSTOMER, 'bulk-export', false, undefined, clock());
  await features.set(CUSTOMER, 'analytics', true, null, clock());
  await features.set(OTHER_CUSTOMER, 'globex-only', true, undefined, clock());
}

const withFlags = async () => {
  const w = await startFoundation();
  await setFlags(w);
  return w;
};

const empty: Scenario<Foundation>[] = [
  {
    name: 'no flags set: an empty list',
    method: 'GET',
    path: `/${CUSTOMER}/features`,
    auth: (w) => `Bearer ${w.admin.token}`,
    status: 200,
    body: { features: [] },
  },
];

const flagged: Scenario<Foundation>[] = [
  {
    name: "the customer's flags, by name; additional_properties only where set",
    method: 'GET',
    path: `/${CUSTOMER}/features`,
    auth: (w) => `Bearer ${w.admin.token}`,
    status: 200,
    body: {
      features: [
        { feature: 'analytics', enabled: true },
        { feature: 'bulk-export', enabled: false },
        { feature: 'scan-heatmap', enabled: true, additional_properties: { colours: 3, beta: true } },
      ],
    },
  },
  {
    name: 'USER_ROLE reads them too (feature.read)',
    method: 'GET',
    path: `/${CUSTOMER}/features`,
    auth: (w) => `Bearer ${w.user.token}`,
    status: 200,
    fields: { features: [{ feature: 'analytics' }, { feature: 'bulk-export' }, { feature: 'scan-heatmap' }] },
  },
  {
    name: 'another customer sees only its own',
    method: 'GET',
    path: `/${OTHER_CUSTOMER}/features`,
    auth: (w) => `Bearer ${w.otherAdmin.token}`,
    status: 200,
    body: { features: [{ feature: 'globex-only', enabled: true }] },
  },
  {
    name: 'a flag the operator disables shows as disabled at once',
    method: 'GET',
    path: async (w) => {
      await w.t.server.ctx.store.features.set(OTHER_CUSTOMER, 'globex-only', false, undefined, w.t.server.ctx.clock());
      return `/${OTHER_CUSTOMER}/features`;
    },
    auth: (w) => `Bearer ${w.otherAdmin.token}`,
    status: 200,
    body: { features: [{ feature: 'globex-only', enabled: false }] },
  },
];

scenarioTable('GET /{c}/features (none set)', startFoundation, empty);
scenarioTable('GET /{c}/features (set by the operator)', withFlags, flagged);

import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireOperationDocs } from '../../src/server/openapi.js';
import { call } from '../helpers/http.js';
import { CUSTOMER, startTestServer, type TestServer } from '../helpers/server.js';

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: unknown;
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}

interface Document {
  openapi: string;
  info: { version: string; contact?: unknown };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: unknown; schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
}

/** fastify's `/:customer_id/users/:user_id` as the document writes it; the downloads' `*` is named `path` there. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}').replace(/\*$/, '{path}');

/** Every operation of the document as `GET /{customer_id}/events` -> operation. */
const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const),
  );

let t: TestServer;
let doc: Document;

beforeAll(async () => {
  t = await startTestServer();
  const answer = await call(t.url, 'GET', '/openapi.json');
  expect(answer.status).toBe(200);
  doc = answer.body as Document;
});
afterAll(async () => t.close());

describe('GET /openapi.json', () => {
  it('documents every registered route (enumerated at run time) with an operationId, summary, description and tag', () => {
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.version).toBe((JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version);

    const routes = t.server.app.registeredRoutes.filter((route) => route.method !== 'HEAD');
    // The foundation's own routes are among them (the enumeration works at all).
    expect(routes.map((route) => `${route.method} ${route.url}`)).toEqual(
      expect.arrayContaining(['POST /auth/login', 'GET /healthz', 'GET /openapi.json', 'GET /:customer_id/users', 'GET /downloads/*']),
    );
    const undocumented = routes
      .filter((route) => {
        const operation = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
        return !operation?.operationId || !operation.summary || !operation.description || !operation.tags?.length;
      })
      .map((route) => `${route.method} ${route.url}`);
    expect(undocumented).toEqual([]);
  });

  it('pins the operationId of every operation: renaming one is a deliberate change of the generated clients', () => {
    expect(Object.fromEntries(operationsOf(doc).map(([key, operation]) => [key, operation.operationId]))).toEqual({
      'GET /healthz': 'getHealth',
      'POST /auth/login': 'login',
      'POST /auth/accept-invitation': 'acceptInvitation',
      'GET /.well-known/jwks.json': 'getJwks',
      'GET /{customer_id}/me': 'getCurrentUser',
      'POST /{customer_id}/users': 'createUser',
      'GET /{customer_id}/users': 'listUsers',
      'GET /{customer_id}/users/{user_id}': 'getUser',
      'DELETE /{customer_id}/users/{user_id}': 'deleteUser',
      'PATCH /{customer_id}/users/{user_id}': 'updateUser',
      'POST /{customer_id}/users/{user_id}/invitation': 'createInvitation',
      'POST /{customer_id}/users/{user_id}/password-reset': 'resetPassword',
      'GET /api-keys/current': 'getCurrentApiKey',
      'POST /{customer_id}/api-keys': 'createApiKey',
      'GET /{customer_id}/api-keys': 'listApiKeys',
      'DELETE /{customer_id}/api-keys/{api_key_id}': 'revokeApiKey',
      'GET /{customer_id}/features': 'listFeatures',
      'GET /downloads/{path}': 'downloadFile',
      'GET /{customer_id}/events': 'listEvents',
      'GET /{customer_id}/events/stream': 'streamEvents',
      'GET /{customer_id}/devices': 'listDevices',
      'GET /{customer_id}/devices/{device_id}': 'getDevice',
      'GET /{customer_id}/audit-log': 'listAuditLog',
      'GET /{customer_id}/retention': 'getRetention',
      'PUT /{customer_id}/retention': 'setRetention',
      'POST /{customer_id}/webhooks': 'createWebhook',
      'GET /{customer_id}/webhooks': 'listWebhooks',
      'GET /{customer_id}/webhooks/{webhook_id}': 'getWebhook',
      'PATCH /{customer_id}/webhooks/{webhook_id}': 'updateWebhook',
      'DELETE /{customer_id}/webhooks/{webhook_id}': 'deleteWebhook',
      'POST /{customer_id}/webhooks/{webhook_id}/test': 'testWebhook',
      'GET /{customer_id}/webhooks/{webhook_id}/deliveries': 'listWebhookDeliveries',
      'POST /{customer_id}/webhooks/{webhook_id}/replay': 'replayWebhook',
      'POST /{customer_id}/webhooks/{webhook_id}/rotate-secret': 'rotateWebhookSecret',
      'POST /{customer_id}/alert-rules': 'createAlertRule',
      'GET /{customer_id}/alert-rules': 'listAlertRules',
      'DELETE /{customer_id}/alert-rules/{rule_id}': 'deleteAlertRule',
      'GET /{customer_id}/alerts': 'listAlerts',
      'GET /{customer_id}/events/export': 'exportEvents',
      'POST /{customer_id}/events/export/tasks': 'createExportTask',
      'GET /{customer_id}/events/export/tasks/{task}': 'getExportTask',
      'GET /{customer_id}/gateways': 'listGateways',
      'POST /{customer_id}/gateways': 'createGateway',
      'POST /{customer_id}/gateways/bulk-create': 'bulkCreateGateways',
      'GET /{customer_id}/gateways/{gateway_id}': 'getGateway',
      'PATCH /{customer_id}/gateways/{gateway_id}': 'updateGateway',
      'DELETE /{customer_id}/gateways/{gateway_id}': 'deleteGateway',
      'POST /{customer_id}/gateways/{gateway_id}/commands': 'createCommand',
      'GET /{customer_id}/gateways/{gateway_id}/commands': 'listGatewayCommands',
      'POST /{customer_id}/commands': 'createCommands',
      'GET /{customer_id}/commands/{command_id}': 'getCommand',
      'POST /{customer_id}/commands/{command_id}/cancel': 'cancelCommand',
      'POST /{customer_id}/gateways/{gateway_id}/prepare-provisioning': 'prepareProvisioning',
      'GET /{customer_id}/gateways/{gateway_id}/certificate': 'getGatewayCertificate',
      'POST /{customer_id}/gateways/{gateway_id}/revoke-certificate': 'revokeGatewayCertificate',
      'POST /{customer_id}/gateways/{gateway_id}/reprovision': 'reprovisionGateway',
      'POST /provisioning': 'redeemProvisioningToken',
      'POST /{customer_id}/create-provisioning-package': 'createProvisioningPackage',
      'GET /{customer_id}/job-configs': 'listJobConfigs',
      'POST /{customer_id}/job-configs': 'createJobConfig',
      'GET /{customer_id}/job-configs/{job_config_id}': 'getJobConfig',
      'PATCH /{customer_id}/job-configs/{job_config_id}': 'updateJobConfig',
      'DELETE /{customer_id}/job-configs/{job_config_id}': 'deleteJobConfig',
      'POST /{customer_id}/job-analysis': 'runJobAnalysis',
      'GET /{customer_id}/assets': 'listAssets',
      'POST /{customer_id}/generate-download-url': 'generateDownloadUrl',
      'GET /openapi.json': 'getOpenApiDocument',
      'GET /metrics': 'getMetrics',
      'GET /': 'getConsole',
      'GET /assets/{path}': 'getConsoleAsset',
    });
  });

  it('states the security of every operation: the IdToken on customer-scoped ones, none on the public ones', () => {
    const security = Object.fromEntries(operationsOf(doc).map(([key, operation]) => [key, operation.security]));
    const publicOperations = Object.entries(security).filter(([, requirement]) => JSON.stringify(requirement) !== '[{"IdToken":[]}]');
    expect(Object.fromEntries(publicOperations)).toEqual({
      'GET /healthz': [],
      'POST /auth/login': [],
      'POST /auth/accept-invitation': [],
      'GET /.well-known/jwks.json': [],
      'GET /downloads/{path}': [],
      'POST /provisioning': [],
      'GET /openapi.json': [],
      // Its own token when SCANHUB_METRICS_TOKEN is set, else none (loopback only).
      'GET /metrics': [{ MetricsToken: [] }, {}],
      // Authenticated by the key in its Authorization header, in the handler: it has no customer to guard.
      'GET /api-keys/current': [],
      // The console's page and files: the page signs in by itself.
      'GET /': [],
      'GET /assets/{path}': [],
    });
    // The IdToken exactly on the customer-scoped ones.
    expect(Object.keys(security).filter((key) => key.includes(' /{customer_id}/') !== (JSON.stringify(security[key]) === '[{"IdToken":[]}]'))).toEqual([]);
  });

  it('defines each tag it uses, with a description, and uses each it defines', () => {
    const used = new Set(operationsOf(doc).flatMap(([, operation]) => operation.tags ?? []));
    expect(doc.tags?.map((tag) => tag.name).sort()).toEqual([...used].sort());
    expect(doc.tags?.filter((tag) => !tag.description)).toEqual([]);
  });

  it('names the deployment as its server', () => {
    expect(doc.servers).toEqual([{ url: t.server.ctx.config.publicUrl, description: 'This deployment (serve --public-url)' }]);
    expect(doc.servers?.[0]?.url).toBe(t.url);
  });

  it('documents each refusal an operation can give by its status, each with the error body and a reason', () => {
    const refusals = Object.fromEntries(
      operationsOf(doc).map(([key, operation]) => [key, Object.keys(operation.responses).filter((status) => Number(status) >= 400).join(' ')]),
    );
    expect(refusals).toEqual({
      'GET /healthz': '500 503',
      'POST /auth/login': '400 401 413 415 429 500 503 507',
      'POST /auth/accept-invitation': '400 401 413 415 429 500 503 507',
      'GET /.well-known/jwks.json': '500 503',
      'GET /{customer_id}/me': '400 401 403 500 503',
      'POST /{customer_id}/users': '400 401 403 409 413 415 500 503 507',
      'GET /{customer_id}/users': '400 401 403 500 503',
      'GET /{customer_id}/users/{user_id}': '400 401 403 404 500 503',
      'DELETE /{customer_id}/users/{user_id}': '400 401 403 404 409 413 415 500 503 507',
      'PATCH /{customer_id}/users/{user_id}': '400 401 403 404 409 413 415 500 503 507',
      'POST /{customer_id}/users/{user_id}/invitation': '400 401 403 404 409 413 415 500 503 507',
      'POST /{customer_id}/users/{user_id}/password-reset': '400 401 403 404 409 413 415 500 503 507',
      'GET /{customer_id}/features': '400 401 403 500 503',
      'GET /downloads/{path}': '400 403 404 500 503',
      'GET /{customer_id}/events': '400 401 403 500 503',
      'GET /{customer_id}/events/stream': '400 401 403 429 500 503',
      'GET /{customer_id}/devices': '400 401 403 500 503',
      'GET /{customer_id}/devices/{device_id}': '400 401 403 404 500 503',
      'GET /{customer_id}/audit-log': '400 401 403 500 503',
      'GET /{customer_id}/retention': '400 401 403 500 503',
      'PUT /{customer_id}/retention': '400 401 403 413 415 500 503 507',
      'POST /{customer_id}/webhooks': '400 401 403 413 415 500 503 507',
      'GET /{customer_id}/webhooks': '400 401 403 500 503',
      'GET /{customer_id}/webhooks/{webhook_id}': '400 401 403 404 500 503',
      'PATCH /{customer_id}/webhooks/{webhook_id}': '400 401 403 404 413 415 500 503 507',
      'DELETE /{customer_id}/webhooks/{webhook_id}': '400 401 403 404 413 415 500 503 507',
      'POST /{customer_id}/webhooks/{webhook_id}/test': '400 401 403 404 413 415 500 503 507',
      'GET /{customer_id}/webhooks/{webhook_id}/deliveries': '400 401 403 404 500 503',
      'POST /{customer_id}/webhooks/{webhook_id}/replay': '400 401 403 404 413 415 500 503 507',
      'POST /{customer_id}/webhooks/{webhook_id}/rotate-secret': '400 401 403 404 413 415 500 503 507',
      'POST /{customer_id}/alert-rules': '400 401 403 413 415 500 503 507',
      'GET /{customer_id}/alert-rules': '400 401 403 500 503',
      'DELETE /{customer_id}/alert-rules/{rule_id}': '400 401 403 404 413 415 500 503 507',
      'GET /{customer_id}/alerts': '400 401 403 500 503',
      'GET /{customer_id}/events/export': '400 401 403 429 500 503 507',
      'POST /{customer_id}/events/export/tasks': '400 401 403 413 415 429 500 503 507',
      'GET /{customer_id}/events/export/tasks/{task}': '400 401 403 404 500 503',
      'GET /{customer_id}/gateways': '400 401 403 500 503',
      'POST /{customer_id}/gateways': '400 401 403 409 413 415 500 503 507',
      'POST /{customer_id}/gateways/bulk-create': '400 401 403 409 413 415 500 503 507',
      'GET /{customer_id}/gateways/{gateway_id}': '400 401 403 404 500 503',
      'PATCH /{customer_id}/gateways/{gateway_id}': '400 401 403 404 409 413 415 500 503 507',
      'GET /api-keys/current': '400 401 500 503',
      'POST /{customer_id}/api-keys': '400 401 403 409 413 415 500 503 507',
      'GET /{customer_id}/api-keys': '400 401 403 500 503',
      'DELETE /{customer_id}/api-keys/{api_key_id}': '400 401 403 404 413 415 500 503 507',
      'DELETE /{customer_id}/gateways/{gateway_id}': '400 401 403 404 413 415 500 503 507',
      'POST /{customer_id}/gateways/{gateway_id}/commands': '400 401 403 404 413 415 500 503 507',
      'GET /{customer_id}/gateways/{gateway_id}/commands': '400 401 403 404 500 503',
      'POST /{customer_id}/commands': '400 401 403 404 413 415 500 503 507',
      'GET /{customer_id}/commands/{command_id}': '400 401 403 404 500 503',
      'POST /{customer_id}/commands/{command_id}/cancel': '400 401 403 404 409 413 415 500 503 507',
      'POST /{customer_id}/gateways/{gateway_id}/prepare-provisioning': '400 401 403 413 415 500 503 507',
      'GET /{customer_id}/gateways/{gateway_id}/certificate': '400 401 403 404 500 503',
      'POST /{customer_id}/gateways/{gateway_id}/revoke-certificate': '400 401 403 404 409 413 415 500 503 507',
      'POST /{customer_id}/gateways/{gateway_id}/reprovision': '400 401 403 404 409 413 415 500 503 507',
      'POST /provisioning': '400 403 413 415 429 500 503 507',
      'POST /{customer_id}/create-provisioning-package': '400 401 403 409 413 415 500 503 507',
      'GET /{customer_id}/job-configs': '400 401 403 500 503',
      'POST /{customer_id}/job-configs': '400 401 403 409 413 415 500 503 507',
      'GET /{customer_id}/job-configs/{job_config_id}': '400 401 403 404 500 503',
      'PATCH /{customer_id}/job-configs/{job_config_id}': '400 401 403 404 409 413 415 500 503 507',
      'DELETE /{customer_id}/job-configs/{job_config_id}': '400 401 403 404 413 415 500 503 507',
      'POST /{customer_id}/job-analysis': '400 401 403 404 413 415 500 503',
      'GET /{customer_id}/assets': '400 401 403 500 503',
      'POST /{customer_id}/generate-download-url': '400 401 403 404 413 415 500 503 507',
      'GET /openapi.json': '500 503',
      'GET /metrics': '401 403 500 503',
      'GET /': '404 500 503',
      'GET /assets/{path}': '400 404 500 503',
    });
    const errorBody = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
    const otherwise = operationsOf(doc).flatMap(([key, operation]) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .filter(([, response]) => JSON.stringify(response.content) !== JSON.stringify(errorBody) || response.description.length < 20)
        .map(([status]) => `${key} ${status}`),
    );
    expect(otherwise).toEqual([]);
    // Only statuses: no range (4XX) or default a client generator would have to guess about.
    expect(operationsOf(doc).flatMap(([key, operation]) => Object.keys(operation.responses).filter((s) => !/^\d{3}$/.test(s)).map((s) => `${key} ${s}`))).toEqual([]);
  });

  it('gives, on every operation, the refusals it documents for a missing IdToken, another customer, a foreign or oversized body', async () => {
    const pathOf = (path: string, customer: string) =>
      path.replace('{customer_id}', customer).replace('{path}', 'exports/none.csv').replace(/\{[a-z_]+\}/g, 'none');
    const probes: string[] = [];
    for (const [key, operation] of operationsOf(doc)) {
      const [method, path] = key.split(' ') as [string, string];
      const documented = Object.keys(operation.responses).map(Number);
      const expectations: [string, Promise<{ status: number; body: unknown }>, number][] = [];
      if (JSON.stringify(operation.security) === '[{"IdToken":[]}]') {
        expectations.push(['no IdToken', call(t.url, method, pathOf(path, CUSTOMER)), 401]);
        expectations.push(['another customer', call(t.url, method, pathOf(path, 'another-customer'), { token: t.adminToken }), 403]);
      }
      if (documented.includes(415)) {
        const options = { token: t.adminToken, contentType: 'text/plain' };
        expectations.push(['a text body', call(t.url, method, pathOf(path, CUSTOMER), { ...options, raw: 'x' }), 415]);
        const tooLarge = JSON.stringify({ padding: 'x'.repeat(1024 * 1024) });
        expectations.push(['a body over 1 MiB', call(t.url, method, pathOf(path, CUSTOMER), { token: t.adminToken, raw: tooLarge, contentType: 'application/json' }), 413]);
      }
      for (const [probe, answer, status] of expectations) {
        const { status: actual, body } = await answer;
        const shaped = typeof body === 'object' && body !== null && Object.keys(body).join() === 'title,details';
        if (actual !== status || !documented.includes(actual) || !shaped) probes.push(`${key} with ${probe}: ${actual} ${JSON.stringify(body)}`);
      }
    }
    expect(probes).toEqual([]);
  });

  it('declares the IdToken and metrics token security schemes and the error body', () => {
    expect(doc.components.securitySchemes).toEqual({
      IdToken: { type: 'http', scheme: 'bearer', description: 'The id_token of POST /auth/login, or an API key of POST /{customer_id}/api-keys, as "Bearer <token>" (the bare token is taken too).' },
      MetricsToken: {
        type: 'http',
        scheme: 'bearer',
        description: 'GET /metrics only: the SCANHUB_METRICS_TOKEN the server runs with. Without it set, /metrics takes no token and answers clients on its own machine only.',
      },
    });
    expect(doc.components.schemas.Error?.required).toEqual(['title', 'details']);
    expect(doc.components.schemas.Error?.properties).toEqual({ title: { type: 'string' }, details: { type: 'string' } });
  });
});

describe('requireOperationDocs', () => {
  const documented = { operationId: 'probe', summary: 'A probe', description: 'Answers {}.', tags: ['operations'] };
  const register = (url: string, schema: Record<string, unknown>) => {
    const app = Fastify();
    requireOperationDocs(app);
    try {
      app.get(url, { schema, handler: async () => ({}) });
      return 'registered';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses a route whose schema lacks its operationId, description or wildcard name, so none reaches the document undocumented', () => {
    const { operationId: _id, ...withoutId } = documented;
    const { description: _description, ...withoutDescription } = documented;
    expect({
      documented: register('/probe', documented),
      withoutId: register('/probe', withoutId),
      withoutDescription: register('/probe', withoutDescription),
      wildcardUnnamed: register('/probe/*', documented),
      wildcardNamed: register('/probe/*', { ...documented, wildcard: { name: 'path', description: 'A path.' } }),
    }).toEqual({
      documented: 'registered',
      withoutId: 'route GET /probe has no operationId in its schema',
      withoutDescription: 'route GET /probe has no description in its schema',
      wildcardUnnamed: 'route GET /probe/* has a wildcard but its schema names no parameter for it',
      wildcardNamed: 'registered',
    });
  });
});

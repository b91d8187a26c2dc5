import { LOGIN_LOCKOUT } from '../domain/lockout.js';
import { CONCURRENCY_LIMITS, RATE_LIMITS } from '../domain/rate-limits.js';

/**
 * What the OpenAPI document says of each operation beyond its route's schema (openapi.ts applies
 * it). operationIds are a contract: generated clients name their methods after them, and
 * test/openapi.test.ts pins the full list, so a rename is a deliberate change.
 */
export interface OperationDoc {
  operationId: string;
  /** What the summary leaves out; a route may say it in its own schema instead. */
  description?: string;
  /** Refusals particular to the operation, status -> when; rewords a shared one (openapi.ts) of the same status. */
  errors?: Record<number, string>;
  /** The name and meaning of the route's `*` (OpenAPI has no wildcard parameter). */
  wildcard?: { name: string; description: string };
  /** A POST that only reads: no 507 (every other POST, PUT, PATCH and DELETE writes). */
  readOnly?: true;
}

/** The tags the routes use, in the order a reader meets them. */
export const TAGS = [
  { name: 'auth', description: 'Log in for an IdToken, accept an invitation, and the keys that verify IdTokens.' },
  { name: 'users', description: 'Users of a customer, their roles, invitations and password resets.' },
  { name: 'api keys', description: 'Long-lived keys for scripts and CI, used in the Authorization header like an IdToken.' },
  { name: 'events', description: 'Scan and telemetry events the gateways sent, listed or exported as CSV.' },
  { name: 'gateways', description: 'Gateways (the wearables\' base stations) of a customer.' },
  { name: 'provisioning', description: 'Certificates and single-use tokens that bring a gateway onto the MQTT broker.' },
  { name: 'job configurations', description: 'Job configurations (start and end barcodes over some gateways) and the job analysis over them.' },
  { name: 'assets', description: 'Apps and firmware to download after agreeing to their EULA.' },
  { name: 'features', description: 'Feature flags of a customer.' },
  { name: 'downloads', description: 'Files handed out through signed, expiring links: exports, assets, provisioning packages.' },
  { name: 'audit', description: 'Who did what: the audit log of security-relevant actions.' },
  { name: 'retention', description: 'How long events are kept before they are deleted.' },
  { name: 'operations', description: 'Health, metrics and this document, for operators and tools.' },
];

const NO_USER = 'No user with this id in the customer.';
const EXPORTS_IN_FLIGHT = `The customer has ${CONCURRENCY_LIMITS.exportsInFlightPerCustomer} export tasks in flight already; Retry-After says when to try again.`;
const NO_GATEWAY = 'No gateway with this id or thing name in the customer.';
const NO_JOB_CONFIG = 'No job configuration with this id in the customer.';

/** Keyed by method and fastify URL, as the routes register them. */
export const OPERATIONS: Record<string, OperationDoc> = {
  'GET /healthz': {
    operationId: 'getHealth',
    description:
      'For load balancers and monitoring: 200 when HTTP, MQTT and the database are all ready, else 503 naming the parts that are not. Why a part is not ready (its error text, a thread\'s last cause) is told only to callers that may read /metrics (its token, or loopback without one).',
    errors: { 503: 'Not ready: details names the parts that are not (starting, or the MQTT writer restarting), or the server is shutting down.' },
  },
  'GET /metrics': {
    operationId: 'getMetrics',
    description:
      'For Prometheus: ingest, MQTT, HTTP, export and database metrics and the process metrics, in the text format. With SCANHUB_METRICS_TOKEN set it needs that token as a Bearer token; unset, it answers clients on the server\'s own machine (loopback) only.',
    errors: {
      401: 'SCANHUB_METRICS_TOKEN is set and the Authorization header does not carry it.',
      403: 'SCANHUB_METRICS_TOKEN is unset and the client is not on the server\'s machine (loopback), or a trusted balancer forwarded it for a client that is not.',
    },
  },
  'GET /openapi.json': {
    operationId: 'getOpenApiDocument',
    description: 'OpenAPI 3.0, generated from the routes\' schemas; each operation has a stable operationId for client generators.',
  },
  'POST /auth/login': {
    operationId: 'login',
    description:
      "Send the id_token in the Authorization header of every customer-scoped call, and customer_id in its path; it is valid expires_in seconds, or until the user's password or roles change (then 401). Its aud is the deployment's public URL.",
    errors: {
      401: 'The e-mail address or password is wrong.',
      429: `${LOGIN_LOCKOUT.refusals} refused log-ins for this user (whatever the spelling of the address) or this unknown address within ${LOGIN_LOCKOUT.windowMs / 60_000} minutes, or more calls to /auth/* a minute from this address than serve --auth-rate-limit allows (default ${RATE_LIMITS.auth}); Retry-After says when to try again.`,
    },
  },
  'POST /auth/accept-invitation': {
    operationId: 'acceptInvitation',
    description:
      "Redeems the token of POST /{customer_id}/users/{user_id}/invitation or /password-reset: sets the user's password and logs them in. Each token works once, within 24 hours, and only while it is the user's newest; redeeming it voids the others, and every IdToken the user had before fails (401) from then on.",
    errors: {
      401: 'The invitation token is unknown, already used or expired.',
      429: `More calls to /auth/* a minute from this address than serve --auth-rate-limit allows (default ${RATE_LIMITS.auth}); Retry-After says when to try again.`,
    },
  },
  'GET /.well-known/jwks.json': {
    operationId: 'getJwks',
    description:
      'A JSON Web Key Set, for services that verify IdTokens themselves (match the token\'s kid; check iss "scanhub" and aud, the deployment\'s public URL). After `scanhub operator rotate-signing-key` it lists the new key and the old ones until every token they signed has expired.',
  },
  'GET /:customer_id/me': {
    operationId: 'getCurrentUser',
    description: 'The user the IdToken belongs to, with their roles; any user of the customer may call it.',
    errors: { 403: 'The IdToken\'s user belongs to another customer.' },
  },
  'POST /:customer_id/users': {
    operationId: 'createUser',
    description:
      'The user has one role and no password: create an invitation next, with which they set one. Answers 200, as the spec says. The caller must hold every permission of the role (no one hands out more than it holds), and only an administrator signed in with an IdToken creates an ADMIN_ROLE user.',
    errors: {
      403: "The caller lacks user.write, or a permission of the role (details names it), or is an API key creating an ADMIN_ROLE user, or the IdToken's user belongs to another customer.",
      409: 'A user with this e-mail address already exists.',
    },
  },
  'GET /:customer_id/users': {
    operationId: 'listUsers',
    description: 'Up to limit users per page; links.next continues the list.',
  },
  'GET /:customer_id/users/:user_id': {
    operationId: 'getUser',
    description: 'Needs user.read, except for the caller\'s own user.',
    errors: { 404: NO_USER },
  },
  'PATCH /:customer_id/users/:user_id': {
    operationId: 'updateUser',
    description:
      "Send any of roles, first_name, last_name, language. A change of roles needs every permission of the user's roles before and after (no one hands out more than it holds); an API key never changes the roles of an administrator or makes one. The user's IdTokens issued before a change of roles are refused (401) from the next request on.",
    errors: {
      403: "The caller lacks user.write, or a permission of the roles involved (details names it), or is an API key and ADMIN_ROLE is involved, or the IdToken's user belongs to another customer.",
      404: NO_USER,
      409: 'The change would leave the customer without an administrator (ADMIN_ROLE).',
    },
  },
  'DELETE /:customer_id/users/:user_id': {
    operationId: 'deleteUser',
    description: 'The user\'s IdTokens stop working at once.',
    errors: { 404: NO_USER, 409: 'The user is the last administrator of the customer.' },
  },
  'POST /:customer_id/users/:user_id/invitation': {
    operationId: 'createInvitation',
    description:
      "For a user without a password: hand the token to them; they set their password with it at POST /auth/accept-invitation. It voids the user's earlier invitations. The caller must hold every permission of the user's roles; an API key never invites an administrator.",
    errors: {
      403: "The caller lacks user.write, or a permission of the user's roles (details names it), or is an API key and the user is an administrator, or the IdToken's user belongs to another customer.",
      404: NO_USER,
      409: 'The user has a password already: reset it with POST /{customer_id}/users/{user_id}/password-reset.',
    },
  },
  'POST /:customer_id/users/:user_id/password-reset': {
    operationId: 'resetPassword',
    description:
      "For a user who has a password: the token works like an invitation at POST /auth/accept-invitation, which sets the new password and makes every IdToken the user had fail (401). The old password works until then. It voids the user's earlier tokens. Only an administrator signed in with an IdToken may call it, never an API key; it is audited (user.password_reset).",
    errors: {
      403: "The caller is an API key, or not an administrator (ADMIN_ROLE), or the IdToken's user belongs to another customer.",
      404: NO_USER,
      409: 'The user has no password yet: invite them with POST /{customer_id}/users/{user_id}/invitation.',
    },
  },
  'GET /api-keys/current': {
    operationId: 'getCurrentApiKey',
    description:
      'For clients that hold only a key (CI): the key in the Authorization header, bare or as "Bearer <key>", and the customer it belongs to. Not for IdTokens, which name their customer in the claim customer_id.',
    errors: {
      400: 'The Authorization header holds an IdToken, not an API key.',
      401: 'No Authorization header, or a malformed, unknown, revoked or expired API key.',
    },
  },
  'POST /:customer_id/api-keys': {
    operationId: 'createApiKey',
    description:
      'The key ("shk_" and 43 characters) is in this answer only; the deployment keeps its hash. Send it in the Authorization header like an IdToken, bare or as "Bearer <key>": it acts in this customer as its creator, with its permissions (by default the creator\'s; never more).',
    errors: {
      400: 'An unknown permission, a permission the caller does not have, or expires_at not in the future.',
      409: 'A key of this name exists and is not revoked.',
    },
  },
  'GET /:customer_id/api-keys': {
    operationId: 'listApiKeys',
    description: 'The keys that are not revoked (expired ones included), without the keys themselves; up to limit per page, links.next continues the list.',
  },
  'DELETE /:customer_id/api-keys/:api_key_id': {
    operationId: 'revokeApiKey',
    description: 'The key is refused (401) from the next request on, on every instance. A revoked key is no longer listed; revoking it again answers 404.',
    errors: { 404: 'No key with this id in the customer, or it was revoked already.' },
  },
  'GET /:customer_id/retention': {
    operationId: 'getRetention',
    description:
      'events_days: how many days events are kept (null: for ever, the default); last_deletion: the last finished deletion pass, read-only (docs/retention.md).',
  },
  'PUT /:customer_id/retention': {
    operationId: 'setRetention',
    description:
      'Events older than events_days days are deleted in small batches, soon after this call and every 10 minutes, while ingest and listing go on; null keeps them for ever. Answers the retention as stored. Recorded in the audit log (retention.set).',
  },
  'GET /:customer_id/features': {
    operationId: 'listFeatures',
    description: 'Non-standard or pre-release features available to the customer, each enabled or not, with its additional properties.',
  },
  'GET /downloads/*': {
    operationId: 'downloadFile',
    description:
      'Follow the link as the API gave it: path, expires and signature belong together and any change invalidates it. Needs no IdToken: the signature authorizes the call.',
    errors: { 403: 'The link has expired, or was altered or is incomplete.', 404: 'The file of the link is no longer kept.' },
    wildcard: { name: 'path', description: 'The file in the data directory, e.g. exports/<task>.csv; its "/" may be sent as is or as %2F.' },
  },
  'GET /:customer_id/events': {
    operationId: 'listEvents',
    description:
      'Events with start_time_millis <= created < end_time_millis (default: the last 24 hours); links.next continues the query. With gateway_id, all events of that gateway in the range come in one streamed response.',
  },
  'GET /:customer_id/audit-log': {
    operationId: 'listAuditLog',
    description:
      'Entries with start_time <= time < end_time (default: the last 24 hours), newest first; links.next continues the query. Log-ins, users, invitations, API keys, gateways and their provisioning, features, EULA agreements and exports (docs/audit.md).',
  },
  'GET /:customer_id/events/stream': {
    operationId: 'streamEvents',
    description:
      'Server-Sent Events (text/event-stream), read with EventSource or fetch: each event as it is stored, in commit order, its cursor as `id:`. A client that reconnects with `Last-Event-ID` gets every event after that id, none twice. A client that does not read is cut off with a last comment naming the id to resume from.',
    errors: {
      400: 'gateway_id is malformed, or Last-Event-ID is not the id of an event of this customer\'s stream (or names a position past every stored event).',
      429: `The user holds ${CONCURRENCY_LIMITS.liveStreamsPerUser} live streams on this instance already; Retry-After says when to try again.`,
    },
  },
  'GET /:customer_id/events/export': {
    operationId: 'exportEvents',
    description: 'Answers once the file is written, with a signed link valid 5 minutes; for large ranges an export task does not hold the request open.',
    errors: {
      429: EXPORTS_IN_FLIGHT,
      507: 'The export file could not be written: the disk of the export files is full. Try again once space is freed.',
    },
  },
  'POST /:customer_id/events/export/tasks': {
    operationId: 'createExportTask',
    description: 'Answers at once with the task id (Location names the task); poll GET /{customer_id}/events/export/tasks/{task} until it is completed. Takes no body.',
    errors: { 429: EXPORTS_IN_FLIGHT },
  },
  'GET /:customer_id/events/export/tasks/:task': {
    operationId: 'getExportTask',
    description: 'The download link comes with SUCCESSFUL while the file is kept (24 h); it is valid 5 minutes and signed anew on every call.',
    errors: { 404: 'No export task with this id in the customer.' },
  },
  'GET /:customer_id/gateways': {
    operationId: 'listGateways',
    description: 'Up to limit gateways per page, each with its connectivity status; links.next continues the list.',
  },
  'POST /:customer_id/gateways': {
    operationId: 'createGateway',
    description: 'The ETag is its version, for If-Match on a later change. Bring the device on next with prepare-provisioning or create-provisioning-package.',
    errors: { 409: 'A gateway of this name already exists.' },
  },
  'POST /:customer_id/gateways/bulk-create': {
    operationId: 'bulkCreateGateways',
    description: 'In one transaction: when one gateway is refused, none is created.',
    errors: { 409: 'A name repeats in the list or belongs to an existing gateway.' },
  },
  'GET /:customer_id/gateways/:gateway_id': {
    operationId: 'getGateway',
    description: 'The ETag is its version, for If-Match on a later change.',
    errors: { 404: NO_GATEWAY },
  },
  'PATCH /:customer_id/gateways/:gateway_id': {
    operationId: 'updateGateway',
    description: 'Changes the fields sent. With If-Match (the ETag last read) a change made meanwhile is not overwritten: 409. The ETag of the answer is the new version.',
    errors: { 404: NO_GATEWAY, 409: 'The gateway changed since the If-Match version, or the new name is taken.' },
  },
  'DELETE /:customer_id/gateways/:gateway_id': {
    operationId: 'deleteGateway',
    description: 'The MQTT broker refuses the gateway\'s certificate from the next connection on.',
    errors: { 404: NO_GATEWAY },
  },
  'POST /:customer_id/gateways/:gateway_id/prepare-provisioning': {
    operationId: 'prepareProvisioning',
    description: 'The device redeems the token, valid 24 hours, at registration_path (POST /provisioning). A gateway is prepared once.',
    errors: { 403: 'The caller lacks the permission or belongs to another customer, or the gateway does not exist or was already prepared.' },
  },
  'GET /:customer_id/gateways/:gateway_id/certificate': {
    operationId: 'getGatewayCertificate',
    description: 'The current certificate: pending until the device fetched it, active, or revoked. After reprovision, the new one (pending until redeemed).',
    errors: { 404: 'No gateway with this id or thing name in the customer, or it was never prepared for provisioning (no certificate).' },
  },
  'POST /:customer_id/gateways/:gateway_id/revoke-certificate': {
    operationId: 'revokeGatewayCertificate',
    description:
      'Revokes every certificate of the gateway: its MQTT connection is closed within a second on whichever instance holds it, and every later connection with them is refused. A pending reprovision token stops working. Answers the current certificate, now revoked.',
    errors: {
      404: 'No gateway with this id or thing name in the customer, or it was never prepared for provisioning (no certificate).',
      409: 'The certificate was already revoked: reprovision gives the gateway a new one.',
    },
  },
  'POST /:customer_id/gateways/:gateway_id/reprovision': {
    operationId: 'reprovisionGateway',
    description:
      'For a replaced or reset device: a new key, certificate and single-use token (24 hours) for the same gateway id, answered as by prepare-provisioning. The previous certificate keeps working until the device redeems the token, then it is revoked and its connection closed.',
    errors: { 404: NO_GATEWAY, 409: 'The gateway was never prepared for provisioning: use prepare-provisioning.' },
  },
  'POST /provisioning': {
    operationId: 'redeemProvisioningToken',
    description:
      'Called by the device with the token of prepare-provisioning, once. Needs no IdToken: the token authorizes the call. With csr (a PEM PKCS#10 request of an EC P-256 or RSA 2048 key the device made), the certificate is of that key and the device keeps it: pkcs12 then holds the two certificates only. certificate and ca_certificate are the PEM certificates in both cases. The service keeps no private key of a gateway: docs/gateways.md "No gateway key at rest".',
    errors: {
      400: 'The csr is not a PEM certificate request, its signature does not verify, its key is neither EC P-256 nor RSA 2048, or it is longer than 16384 characters; the token stays unused.',
      403: 'The token is unknown, already used or expired, or its gateway was deleted.',
      429: `More calls a minute from this address than serve --provisioning-rate-limit allows (default ${RATE_LIMITS.provisioning}); Retry-After says when to try again.`,
    },
  },
  'POST /:customer_id/create-provisioning-package': {
    operationId: 'createProvisioningPackage',
    description:
      'Each package is a document with the registration token and the optional Wi-Fi settings. New gateways (gateway_name) need gateway.write as well. All gateways or none.',
    errors: { 409: 'A new gateway\'s name repeats in the list or is taken.' },
  },
  'GET /:customer_id/job-configs': {
    operationId: 'listJobConfigs',
    description: 'All of them in one list. Send the ETag in If-None-Match for a 304 while nothing changed.',
  },
  'POST /:customer_id/job-configs': {
    operationId: 'createJobConfig',
    description: 'A job on one of gateway_ids begins with a scan starting with start_barcode and ends with one starting with end_barcode. The ETag is its version.',
    errors: { 409: 'A job configuration of this name already exists.' },
  },
  'GET /:customer_id/job-configs/:job_config_id': {
    operationId: 'getJobConfig',
    description: 'Send the ETag in If-Match on a later change.',
    errors: { 404: NO_JOB_CONFIG },
  },
  'PATCH /:customer_id/job-configs/:job_config_id': {
    operationId: 'updateJobConfig',
    errors: { 404: NO_JOB_CONFIG, 409: 'The job configuration changed since the If-Match version, or the new name is taken.' },
  },
  'DELETE /:customer_id/job-configs/:job_config_id': {
    operationId: 'deleteJobConfig',
    description: 'Job analyses can no longer name it; the events stay.',
    errors: { 404: NO_JOB_CONFIG },
  },
  'POST /:customer_id/job-analysis': {
    operationId: 'runJobAnalysis',
    description: 'For each gateway of the job configuration, the jobs its events show between the barcodes; computed in a worker thread.',
    errors: { 404: NO_JOB_CONFIG },
    readOnly: true,
  },
  'GET /:customer_id/assets': {
    operationId: 'listAssets',
    description: 'Agree to an asset\'s EULA (its version and checksum) with generate-download-url to download it.',
  },
  'POST /:customer_id/generate-download-url': {
    operationId: 'generateDownloadUrl',
    description: 'Records who agreed to which EULA; eula_version, and eula_checksum when sent, must be those of the asset.',
    errors: { 404: 'No asset of this type, or of this version.' },
  },
};

import Fastify from 'fastify';
import { expect, it } from 'vitest';
import { installConventions } from '../../src/server/conventions.js';
import { StoreUnavailable } from '../../src/store/ports/index.js';

it('a route whose store is unavailable answers 503 {title, details} with Retry-After', async () => {
  const app = Fastify();
  await installConventions(app);
  app.get('/probe', async () => {
    throw new StoreUnavailable('PostgreSQL is not reachable: connect ECONNREFUSED /tmp/pg/.s.PGSQL.5432');
  });
  await app.ready();
  const reply = await app.inject({ method: 'GET', url: '/probe' });
  expect(reply.statusCode).toBe(503);
  expect(reply.headers['retry-after']).toBe('5');
  expect(reply.json()).toEqual({
    title: 'Service Unavailable',
    details: 'The database is unavailable (PostgreSQL is not reachable: connect ECONNREFUSED /tmp/pg/.s.PGSQL.5432); try again shortly.',
  });
  await app.close();
});

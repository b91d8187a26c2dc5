import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { strictBodyValidators } from '../src/server/validation.js';

/** A bare fastify app with the validators of buildApp and one route that uses every part. */
async function appWithProbe() {
  const app = Fastify({
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', allErrors: false } },
    schemaController: strictBodyValidators(),
  });
  app.post('/probe/:n', {
    schema: {
      params: { type: 'object', properties: { n: { type: 'integer' } } },
      querystring: { type: 'object', properties: { limit: { type: 'integer' }, flag: { type: 'boolean' } } },
      headers: { type: 'object', properties: { 'If-Match': { type: 'integer' } }, required: ['If-Match'] },
      body: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } },
    },
    handler: async (request) => ({ params: request.params, query: request.query, ifMatch: request.headers['if-match'], body: request.body }),
  });
  await app.ready();
  return app;
}

describe('validators: coerce text parts, never the JSON body', () => {
  it('coerces path, query and header values, which arrive as text', async () => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7?limit=20&flag=true', headers: { 'if-match': '3' }, payload: { name: 'x', count: 2 } });
    expect(reply.statusCode).toBe(200);
    expect(reply.json()).toEqual({ params: { n: 7 }, query: { limit: 20, flag: true }, ifMatch: 3, body: { name: 'x', count: 2 } });
    await app.close();
  });

  it('a header schema names headers in any case, as with fastify\'s default compiler', async () => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7', payload: { name: 'x' } });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toBe("headers must have required property 'if-match'");
    await app.close();
  });

  it.each([
    ['a number for a string', { name: 1 }, 'body/name must be string'],
    ['a string for an integer', { count: '2' }, 'body/count must be integer'],
    ['a boolean for a string', { name: true }, 'body/name must be string'],
    ['an array for a string', { name: ['x'] }, 'body/name must be string'],
  ])('refuses %s in the body', async (_name, payload, message) => {
    const app = await appWithProbe();
    const reply = await app.inject({ method: 'POST', url: '/probe/7', headers: { 'if-match': '1' }, payload });
    expect(reply.statusCode).toBe(400);
    expect(reply.json().message).toBe(message);
    await app.close();
  });
});

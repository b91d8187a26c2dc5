import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, loggedIn, outcome } from '../../helpers/cli.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, CUSTOMER } from '../../helpers/server.js';
import { startFoundation, type Foundation } from '../../helpers/world.js';

let w: Foundation;
beforeAll(async () => {
  w = await startFoundation();
});
afterAll(() => w.close());


describe('scanhub features list', () => {
  it('prints the flags as rows when piped, and the API items with --json', async () => {
    await w.t.server.ctx.store.features.set(CUSTOMER, 'beta-ui', true, { level: 2 }, Date.now());
    await w.t.server.ctx.store.features.set(CUSTOMER, 'alpha', false, undefined, Date.now());
    const env = await loggedIn(w.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(outcome(await cli(env, ['features', 'list']))).toEqual({ code: 0, stdout: 'alpha\tno\t\nbeta-ui\tyes\t{"level":2}\n', stderr: '' });
    const json = await cli(env, ['features', 'list', '--json']);
    expect(outcome(json)).toEqual({
      code: 0,
      stdout: JSON.stringify([{ feature: 'alpha', enabled: false }, { feature: 'beta-ui', enabled: true, additional_properties: { level: 2 } }], null, 2) + '\n',
      stderr: '',
    });
  });
});


import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type HttpAnswer } from './http.js';

/** A value of a scenario, or a function of the world that gives it (ids and tokens known only at run time). */
export type Given<W, T> = T | ((world: W) => T | Promise<T>);

/** A JSON value (spelled out: `unknown` would swallow the function form of Given). */
export type Json = object | string | number | boolean | null;

/**
 * One row of an endpoint's scenario table (after PocketBase's ApiScenario): the request, the
 * expected status and either the exact body or the fields the body must contain.
 */
export interface Scenario<W> {
  name: string;
  method: string;
  path: Given<W, string>;
  /** The whole Authorization header (`Bearer x`, a bare token, ...); no header when undefined. */
  auth?: Given<W, string | undefined>;
  json?: Given<W, Json>;
  raw?: string;
  contentType?: string;
  headers?: Given<W, Record<string, string>>;
  status: number;
  /** The exact body (compared with toEqual). */
  body?: Given<W, Json>;
  /** Fields the body must have (compared with toMatchObject). */
  fields?: Given<W, Record<string, unknown>>;
  /** Further checks on the answer. */
  check?: (answer: HttpAnswer, world: W) => void | Promise<void>;
  /** Clean-up that runs even when the scenario failed (e.g. give the clock back). */
  after?: (world: W) => void | Promise<void>;
}

/** What every scenario world provides: where the server is and how to stop it. */
export interface World {
  url: string;
  close(): Promise<void>;
}

async function resolve<W, T>(given: Given<W, T>, world: W): Promise<T> {
  return typeof given === 'function' ? (given as (world: W) => T | Promise<T>)(world) : given;
}

/** Sends the scenario's request to the world's server and checks the answer. */
export async function runScenario<W extends World>(world: W, scenario: Scenario<W>): Promise<HttpAnswer> {
  try {
    return await runChecks(world, scenario);
  } finally {
    await scenario.after?.(world);
  }
}

async function runChecks<W extends World>(world: W, scenario: Scenario<W>): Promise<HttpAnswer> {
  const answer = await call(world.url, scenario.method, await resolve(scenario.path, world), {
    authorization: scenario.auth === undefined ? undefined : await resolve(scenario.auth, world),
    json: scenario.json === undefined ? undefined : await resolve(scenario.json, world),
    raw: scenario.raw,
    contentType: scenario.contentType,
    headers: scenario.headers === undefined ? undefined : await resolve(scenario.headers, world),
  });
  expect({ status: answer.status, body: answer.body }).toMatchObject({ status: scenario.status });
  if (scenario.body !== undefined) expect(answer.body).toEqual(await resolve(scenario.body, world));
  if (scenario.fields !== undefined) expect(answer.body).toMatchObject(await resolve(scenario.fields, world));
  await scenario.check?.(answer, world);
  return answer;
}

/**
 * A describe block of scenarios sharing one world (one server on a fresh data directory).
 * Rows must not depend on each other: each creates what it changes under names of its own.
 */
export function scenarioTable<W extends World>(title: string, setup: () => Promise<W>, table: Scenario<W>[]): void {
  describe(title, () => {
    let world: W | undefined;
    beforeAll(async () => {
      world = await setup();
    });
    afterAll(async () => {
      await world?.close();
    });
    scenarioRows(table, () => world!);
  });
}

/**
 * One test per row, in order, on the world of the enclosing describe (which sets it up and closes
 * it): for tables whose rows build on each other, such as a create, then a read of what it made.
 */
export function scenarioRows<W extends World>(table: Scenario<W>[], world: () => W): void {
  for (const scenario of table) {
    it(scenario.name, async () => {
      await runScenario(world(), scenario);
    });
  }
}

/** The error body `{ title, details }` of a status. */
export const error = (title: string, details: string) => ({ title, details });
export const unauthorizedBody = (details: string) => error('Unauthorized', details);
export const NO_HEADER = unauthorizedBody('No authentication header found: send the IdToken in the Authorization header.');
export const BAD_TOKEN = unauthorizedBody('The token in the Authorization header is invalid or expired: log in again for a new one.');
export const GONE_USER = unauthorizedBody('The user of this token no longer exists.');

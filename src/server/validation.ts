import { createRequire } from 'node:module';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import { exactNumbersOfBody, exactNumbersOfText, type Validator } from './exact-numbers.js';

type ValidatorFactory = (externalSchemas: unknown, ajvOptions: { customOptions?: Record<string, unknown> }) => FastifySchemaCompiler<unknown>;

// fastify's own validator compiler, resolved through fastify's dependencies (not a dependency of ours).
const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
const { AjvCompiler } = requireFromFastify('@fastify/ajv-compiler') as { AjvCompiler: () => ValidatorFactory };

/**
 * Validators that coerce query strings, path parameters and headers (they arrive as text) but never
 * a JSON body: fastify's default `coerceTypes` would turn `"first_name": 1` into "1", where a
 * client sent the wrong type and deserves a 400. Every number must also be exact
 * (exact-numbers.ts).
 */
export function strictBodyValidators(): FastifyServerOptions['schemaController'] {
  const pool = AjvCompiler();
  const buildValidator: ValidatorFactory = (externalSchemas, ajvOptions) => {
    const coercing = pool(externalSchemas, ajvOptions);
    const strict = pool(externalSchemas, { ...ajvOptions, customOptions: { ...ajvOptions.customOptions, coerceTypes: false } });
    return (route) => {
      if (route.httpPart === 'body') return exactNumbersOfBody(strict(route) as Validator) as ReturnType<typeof strict>;
      const schema = route.httpPart === 'headers' ? lowerCaseHeaderNames(route.schema) : route.schema;
      return exactNumbersOfText(coercing({ ...route, schema }) as Validator, schema) as ReturnType<typeof strict>;
    };
  };
  // fastify types the factory with ajv's own function types, which we do not import.
  return { compilersFactory: { buildValidator } } as unknown as FastifyServerOptions['schemaController'];
}

/**
 * Header names arrive lower-cased; fastify lower-cases a header schema's names itself only with
 * its default compiler, so a route declaring `If-Match` keeps working with ours.
 */
function lowerCaseHeaderNames(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const { properties, required, ...rest } = schema as { properties?: Record<string, unknown>; required?: unknown };
  return {
    ...rest,
    ...(properties ? { properties: Object.fromEntries(Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value])) } : {}),
    ...(Array.isArray(required) ? { required: required.map((name) => String(name).toLowerCase()) } : {}),
  };
}

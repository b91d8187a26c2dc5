/**
 * Numbers a request may carry: finite, within ±(2^53 - 1) (what JSON, JavaScript, SQLite and
 * Date all keep exactly), and, where they arrive as text (query, path, headers), written in
 * decimal digits. ajv's coercion turns "Infinity", "9e999", "1e400" and "0x10" into numbers and
 * then skips its minimum and maximum for values that are not finite; JSON.parse reads 1e400 as
 * Infinity and 2^63 as an integer. Such values reached SQLite and Date and made 500s.
 */

/** An ajv validator as fastify calls it: true or false, with `errors` after a false. */
export type Validator = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/** An error in ajv's shape, so that conventions.ts words it like every other validation error. */
interface NumberError {
  instancePath: string;
  schemaPath: string;
  keyword: 'exactNumber';
  params: { value: string };
  message: string;
}

const LIMIT = Number.MAX_SAFE_INTEGER;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const RANGE = `between -${LIMIT} and ${LIMIT}`;

/** The value as a client would recognise it in a sentence, cut short when long. */
function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

function numberError(path: string, value: string, message: string): NumberError {
  return { instancePath: path, schemaPath: '#/exactNumber', keyword: 'exactNumber', params: { value }, message };
}

function isExact(value: number): boolean {
  return Number.isFinite(value) && Math.abs(value) <= LIMIT;
}

/** The top-level properties a text part's schema types as integer or number, with the word for their kind. */
function numericProperties(schema: unknown): [name: string, kind: string][] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | null)?.properties;
  if (typeof properties !== 'object' || properties === null) return [];
  return Object.entries(properties).flatMap(([name, property]) => {
    const types = [property?.type].flat();
    if (types.includes('number')) return [[name, 'a number'] as [string, string]];
    return types.includes('integer') ? [[name, 'an integer'] as [string, string]] : [];
  });
}

/** Why a text value that ajv coerced into a number is not an exact decimal one, if it is not. */
function textProblem(text: string, kind: string): string | undefined {
  if (!DECIMAL.test(text)) return `must be ${kind} in decimal digits, not ${quote(text)}`;
  if (!isExact(Number(text))) return `must be ${RANGE}, not ${quote(text)}`;
  return undefined;
}

/**
 * Wraps the coercing validator of a query string, path parameters or headers: after ajv accepted
 * them, each numeric parameter must have been sent as exact decimal digits.
 */
export function exactNumbersOfText(validate: Validator, schema: unknown): Validator {
  const numeric = numericProperties(schema);
  if (numeric.length === 0) return validate;
  const guarded: Validator = (data) => {
    const sent = numeric.map(([name, kind]) => [name, kind, (data as Record<string, unknown> | null)?.[name]] as const);
    const valid = validate(data);
    guarded.errors = validate.errors;
    if (!valid) return false;
    for (const [name, kind, value] of sent) {
      for (const text of [value].flat()) {
        const problem = typeof text === 'string' ? textProblem(text, kind) : undefined;
        if (problem) {
          guarded.errors = [numberError(`/${name}`, text as string, problem)];
          return false;
        }
      }
    }
    return true;
  };
  return guarded;
}

/**
 * The first number of a JSON value that is not exact, with its path; iterative, since a body may
 * nest as deep as 1 MiB of brackets allows.
 */
function firstInexactNumber(root: unknown): { path: string; value: number } | undefined {
  const pending: [unknown, string][] = [[root, '']];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'number') {
      if (!isExact(value)) return { path, value };
    } else if (typeof value === 'object' && value !== null) {
      const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value);
      for (let index = entries.length - 1; index >= 0; index--) pending.push([entries[index]![1], `${path}/${entries[index]![0]}`]);
    }
  }
  return undefined;
}

/** Wraps the validator of a JSON body: after ajv accepted it, every number in it must be exact. */
export function exactNumbersOfBody(validate: Validator): Validator {
  const guarded: Validator = (data) => {
    const valid = validate(data);
    guarded.errors = validate.errors;
    if (!valid) return false;
    const inexact = firstInexactNumber(data);
    if (!inexact) return true;
    guarded.errors = [numberError(inexact.path, String(inexact.value), `must be a number ${RANGE}, not ${String(inexact.value)}`)];
    return false;
  };
  return guarded;
}

import { vi } from 'vitest';

export interface UntilOptions {
  /** What is awaited, for the failure message (a function: read when it fails). */
  what?: string | (() => string);
  /** How long to keep asking (default 20 s). */
  timeoutMs?: number;
  /** How often to ask (default every 20 ms). */
  everyMs?: number;
}

/**
 * The first value of `get` that satisfies `ok` (without `ok`: that is truthy), asked again every
 * `everyMs`: for a state the code under test reaches by itself and announces to no one a test can
 * listen to (a health answer, a row, a balancer's view of its servers). An error of `get` fails at
 * once; so does `timeoutMs` passing, naming `what` and the last value.
 */
export async function until<T>(get: () => T | Promise<T>, options?: UntilOptions): Promise<T>;
export async function until<T>(get: () => T | Promise<T>, ok: (value: T) => boolean, options?: UntilOptions): Promise<T>;
export async function until<T>(
  get: () => T | Promise<T>,
  okOrOptions: ((value: T) => boolean) | UntilOptions = {},
  options: UntilOptions = {},
): Promise<T> {
  const ok = typeof okOrOptions === 'function' ? okOrOptions : Boolean;
  const { what = 'the condition', timeoutMs = 20_000, everyMs = 20 } = typeof okOrOptions === 'function' ? options : okOrOptions;
  let last: { value: T } | undefined;
  const check = async () => {
    last = { value: await get() };
    return ok(last.value);
  };
  try {
    await vi.waitUntil(check, { timeout: timeoutMs, interval: everyMs });
  } catch (error) {
    if (!(error instanceof Error) || error.message !== 'Timed out in waitUntil!') throw error;
    const named = typeof what === 'function' ? what() : what;
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${named}; last seen: ${last ? JSON.stringify(last.value) : 'nothing yet'}`);
  }
  return last!.value;
}

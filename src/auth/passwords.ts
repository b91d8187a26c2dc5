import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';

type ScryptOptions = { N: number; r: number; p: number; maxmem: number };
const scryptAsync = promisify(scryptCallback) as (password: string, salt: Buffer, keylen: number, options: ScryptOptions) => Promise<Buffer>;

/**
 * Hashes computed at once, the others wait their turn: each holds 128 * N * r bytes while it runs
 * (128 MiB at 2^17) and keeps a core busy, so more than one per core (and more than libuv's four
 * threads) would add memory and no speed (docs/users.md "Passwords").
 */
const HASHES_AT_ONCE = Math.min(availableParallelism(), 4);
let hashing = 0;
const waiting: (() => void)[] = [];

/** scrypt, at most HASHES_AT_ONCE at a time in this process. */
async function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  if (hashing < HASHES_AT_ONCE) hashing++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await scryptAsync(password, salt, keylen, options);
  } finally {
    // The slot passes to the next in line, or is freed.
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

/** scrypt's cost parameters: N (CPU and memory), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * The cost of new hashes: OWASP's scrypt setting (Password Storage Cheat Sheet), N = 2^17, r = 8,
 * p = 1. One hash holds 128 MiB while it runs (docs/users.md "Passwords" says what that costs).
 * Every `serve` uses it; only the in-process test server may choose a cheaper one.
 */
export const DEFAULT_SCRYPT_COST: Readonly<ScryptCost> = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });

/** Stored hashes above this N are refused rather than computed: 2^20 would hold 1 GiB. */
const MAX_N = 2 ** 20;
const KEYLEN = 32;
export const MIN_PASSWORD_LENGTH = 12;

/**
 * What scrypt needs to be allowed: OpenSSL refuses when 128 * r * (N + p + 2) bytes (its V and B
 * arrays) exceed maxmem, and Node's default maxmem is 32 MiB.
 */
function maxmemOf(cost: ScryptCost): number {
  return 128 * cost.r * (cost.N + cost.p + 2);
}

/** `scrypt$N$r$p$salt$hash` (base64) for the password, at the given cost. */
export async function hashPassword(password: string, cost: ScryptCost = DEFAULT_SCRYPT_COST): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, { ...cost, maxmem: maxmemOf(cost) });
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** The cost a stored hash was made with, or undefined when it is not a hash hashPassword makes. */
export function costOf(stored: string): ScryptCost | undefined {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !hash) return undefined;
  const valid = Number.isSafeInteger(cost.N) && cost.N > 1 && (cost.N & (cost.N - 1)) === 0 && cost.N <= MAX_N;
  return valid && [cost.r, cost.p].every((x) => Number.isSafeInteger(x) && x >= 1 && x <= 64) ? cost : undefined;
}

/** Whether the password matches a hash made by hashPassword; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const cost = costOf(stored);
  if (!cost) return false;
  const [, , , , salt, hash] = stored.split('$');
  const expected = Buffer.from(hash!, 'base64');
  const actual = await scrypt(password, Buffer.from(salt!, 'base64'), expected.length, { ...cost, maxmem: maxmemOf(cost) });
  return timingSafeEqual(expected, actual);
}

/** Whether a stored hash was made at a lower cost than `cost` (its user's next log-in hashes it again). */
export function isWeakerThan(stored: string, cost: ScryptCost): boolean {
  const made = costOf(stored);
  return made !== undefined && (made.N < cost.N || made.r < cost.r || made.p < cost.p);
}

/**
 * A hash that no password matches, at the given cost: verified when the e-mail address is
 * unknown, so that an unknown address costs exactly what a known one does.
 */
export function dummyHash(cost: ScryptCost): string {
  return ['scrypt', cost.N, cost.r, cost.p, Buffer.alloc(16).toString('base64'), Buffer.alloc(KEYLEN).toString('base64')].join('$');
}

/** A readable generated password: 24 base64url characters (144 random bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

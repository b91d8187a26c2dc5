import { isIP } from 'node:net';
import { InvalidArgumentError } from 'commander';
import { customerIdProblem, isCustomerId, isEmailAddress } from '../../domain/identifiers.js';
import { MAX_CREATED_AHEAD_MS } from '../../domain/payload-limits.js';
import { parseDuration, parseTimeInput } from '../../domain/time-input.js';
import { KEY_TYPES, type KeyType } from '../../pki/keys.js';
import type { ServeOptions } from '../../serve/options.js';
import { CliError, Exit } from '../io.js';
import { LOG_LEVELS, type LogFormat } from './log.js';

// How `scanhub serve` reads its flags and environment: each flag's parser refuses a bad value
// with a sentence that says what would do, before anything starts.

/** The flags of `scanhub serve` as commander hands them over: those ServeOptions takes as they are, and those the command maps onto it. */
export type ServeFlags = Pick<ServeOptions, 'dataDir' | 'blobDir' | 'host' | 'port' | 'mqttPort' | 'publicUrl' | 'mqttPublicHost' | 'mqttPublicPort' | 'trustProxy' | 'mqttProxyProtocol' | 'webhookAllowLoopback'> & {
  gatewayKeyType: KeyType;
  database?: string;
  masterKeyFile?: string;
  mqttProxyTrust: string[];
  tlsCert?: string;
  tlsKey?: string;
  https?: boolean;
  minCreated: number;
  maxCreatedAhead: number;
  logFormat?: LogFormat;
  authRateLimit: number;
  provisioningRateLimit: number;
  retentionRate: number;
};

export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError(`"${value}" is not a port number (0-65535).`);
  return n;
}

/** `--auth-rate-limit`, `--provisioning-rate-limit`: requests a minute from one address, 1 to 1,000,000. */
export function perMinute(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1_000_000) throw new InvalidArgumentError(`"${value}" is not a number of requests a minute (1-1000000).`);
  return n;
}

/** `--retention-rate`: events a deletion pass deletes per second at most. */
export function eventsPerSecond(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1_000_000) throw new InvalidArgumentError(`"${value}" is not a number of events a second (1-1000000).`);
  return n;
}

/** `--trust-proxy 10.0.0.0/8,192.168.1.5`: addresses or CIDR ranges, IPv4 or IPv6, comma-separated. */
export function trustedProxies(value: string): string[] {
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0) throw new InvalidArgumentError('give at least one address or CIDR range, e.g. 10.0.0.0/8.');
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (!family || !prefixOk || extra !== undefined) {
      throw new InvalidArgumentError(`"${entry}" is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8).`);
    }
  }
  return entries;
}

/** The base of every link the service hands out: an absolute http(s) URL without query or fragment. */
export function publicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`"${value}" is not an absolute URL such as https://scanhub.example.com.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError(`"${value}" is not an http or https URL.`);
  if (url.search || url.hash || url.username || url.password) {
    throw new InvalidArgumentError(`"${value}" must not carry a query, a fragment or credentials.`);
  }
  return value;
}

/** `--gateway-key-type`: one of KEY_TYPES. */
export function gatewayKeyType(value: string): KeyType {
  if (!(KEY_TYPES as readonly string[]).includes(value)) throw new InvalidArgumentError(`"${value}" is not a key type: give ${KEY_TYPES.join(' or ')}.`);
  return value as KeyType;
}

function isDuration(value: string): boolean {
  try {
    parseDuration(value);
    return true;
  } catch {
    return false;
  }
}

/** The earliest `created` of an MQTT event: a fixed time (relative forms would move with each start). */
export function earliestCreated(value: string): number {
  if (value.trim().toLowerCase() === 'now' || isDuration(value)) throw new InvalidArgumentError(`"${value}" is relative; give a date such as 2000-01-01 or epoch milliseconds.`);
  let millis: number;
  try {
    millis = parseTimeInput(value, Date.now());
  } catch {
    throw new InvalidArgumentError(`"${value}" is not a time: use ISO 8601 (2000-01-01, 2000-01-01T00:00:00Z) or epoch milliseconds.`);
  }
  if (millis < 0 || millis >= Date.now()) throw new InvalidArgumentError(`"${value}" must lie between 1970 and now.`);
  return millis;
}

/** How far past its receipt an MQTT event's `created` may be. */
export function createdAhead(value: string): number {
  let millis: number;
  try {
    millis = parseDuration(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  if (millis > MAX_CREATED_AHEAD_MS) throw new InvalidArgumentError(`"${value}" is more than ${MAX_CREATED_AHEAD_MS / 86_400_000}d.`);
  return millis;
}

/**
 * The environment's settings for the first start (customer, administrator), the log level and the metrics token,
 * checked as `scanhub operator customers add` checks its arguments: a bad value is refused before
 * anything is created.
 */
export function environmentSettings(env: NodeJS.ProcessEnv) {
  const customerId = env.SCANHUB_CUSTOMER_ID || 'default';
  if (!isCustomerId(customerId)) throw new CliError(`SCANHUB_CUSTOMER_ID: ${customerIdProblem(customerId)}`, Exit.USAGE);
  const adminEmail = env.SCANHUB_ADMIN_EMAIL || 'admin@localhost';
  if (!isEmailAddress(adminEmail)) throw new CliError(`SCANHUB_ADMIN_EMAIL: "${adminEmail}" is not an e-mail address`, Exit.USAGE);
  const logLevel = env.SCANHUB_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new CliError(`SCANHUB_LOG_LEVEL: "${logLevel}" is not one of ${LOG_LEVELS.join(', ')}`, Exit.USAGE);
  // An empty SCANHUB_METRICS_TOKEN is no token (as an unset one): /metrics then answers loopback only.
  return { customerId, adminEmail, adminPassword: env.SCANHUB_ADMIN_PASSWORD || undefined, logLevel, metricsToken: env.SCANHUB_METRICS_TOKEN || undefined };
}

/** A switch set from the environment: 1/true/yes/on or 0/false/no/off (empty is off); anything else is a usage error. */
export function environmentSwitch(name: string, value: string | undefined): boolean {
  const text = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(text)) return false;
  throw new CliError(`${name}: "${value}" is neither 1/true/yes/on nor 0/false/no/off`, Exit.USAGE);
}

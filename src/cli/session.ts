import type { Command } from 'commander';
import { looksLikeApiKey } from '../auth/api-keys.js';
import { ApiClient, seg, type CustomerApi } from '../client/api.js';
import { currentApiKey } from '../client/api-keys.js';
import { CliError, Exit, createIo, type GlobalOptions, type Io } from './io.js';
import { TlsPairError, readCaCertificate } from '../pki/tls-pair.js';
import { readProfile, type Profile } from './profile.js';

/** What a client command works with: where to send, as whom, for which customer (`base`, `/{customer}` percent-encoded). */
export interface Session extends CustomerApi {
  io: Io;
  customer: string;
}

/** The global flags of the command (commander merges them from the root). */
export function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/**
 * Resolves deployment, token and customer by flag > env (SCANHUB_URL, _TOKEN, _CUSTOMER) > saved profile.
 * The profile's token goes only to the profile's deployment: with another URL (flag or env) it
 * stays home. A customer not given explicitly is the one of the token in use: an IdToken's claim,
 * or for an API key (which names none) what the deployment says of it (GET /api-keys/current).
 */
export async function connect(command: Command, env: NodeJS.ProcessEnv = process.env): Promise<Session> {
  const options = globalsOf(command);
  const io = createIo(options, env);
  const profile = readProfile(env);
  const url = (options.url ?? env.SCANHUB_URL ?? profile?.url)?.replace(/\/+$/, '');
  const profileToken = profile && url === profile.url.replace(/\/+$/, '') ? profile.token : undefined;
  const token = options.token ?? env.SCANHUB_TOKEN ?? profileToken;
  if (!url) throw new CliError('no deployment configured: run `scanhub login --url URL` or set SCANHUB_URL', Exit.AUTH);
  checkUrl(url);
  if (!token) throw new CliError(`not logged in to ${url}: run \`scanhub login\` or set SCANHUB_TOKEN`, Exit.AUTH);
  const client = new ApiClient(url, token, { ca: trustedCa(options, env, profile, url) });
  const customer =
    options.customer ??
    env.SCANHUB_CUSTOMER ??
    (looksLikeApiKey(token) ? (await currentApiKey(client)).customer_id : claimsOf(token)?.customer_id) ??
    profile?.customer;
  if (!customer) throw new CliError('no customer known: pass --customer or set SCANHUB_CUSTOMER', Exit.USAGE);
  return { io, client, customer, base: `/${seg(customer)}` };
}

/** The CA to trust by `--ca-cert` > SCANHUB_CA_CERT > the profile's (for the profile's deployment only). */
function trustedCa(options: GlobalOptions, env: NodeJS.ProcessEnv, profile: Profile | undefined, url: string): string | undefined {
  const file = options.caCert ?? env.SCANHUB_CA_CERT;
  if (file) {
    try {
      return readCaCertificate(file);
    } catch (error) {
      if (error instanceof TlsPairError) throw new CliError(`--ca-cert: ${error.message}`, Exit.USAGE);
      throw error;
    }
  }
  return profile && url.replace(/\/+$/, '') === profile.url.replace(/\/+$/, '') ? profile.ca_cert : undefined;
}

/** The claims of an IdToken, read without verifying (the server verifies); undefined if it is no JWT. */
export function claimsOf(token: string): { customer_id?: string; email?: string; exp?: number } | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    return {
      customer_id: typeof claims.customer_id === 'string' ? claims.customer_id : undefined,
      email: typeof claims.email === 'string' ? claims.email : undefined,
      exp: typeof claims.exp === 'number' ? claims.exp : undefined,
    };
  } catch {
    return undefined;
  }
}

/** A deployment URL must be absolute http(s), such as http://127.0.0.1:8080: refused in a sentence otherwise. */
function checkUrl(url: string): void {
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new CliError(`"${url}" is not a deployment URL: use one such as http://127.0.0.1:8080 (--url, SCANHUB_URL or the profile)`, Exit.USAGE);
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new CliError(`"${url}" is not an http or https URL (--url, SCANHUB_URL or the profile)`, Exit.USAGE);
  }
}

/** Like connect, but needs only the URL (login, provisioning). */
export function connectAnonymous(command: Command, env: NodeJS.ProcessEnv = process.env): { io: Io; client: ApiClient } {
  const options = globalsOf(command);
  const io = createIo(options, env);
  const profile = readProfile(env);
  const url = options.url ?? env.SCANHUB_URL ?? profile?.url;
  if (!url) throw new CliError('no deployment URL: pass --url or set SCANHUB_URL', Exit.USAGE);
  checkUrl(url);
  return { io, client: new ApiClient(url, undefined, { ca: trustedCa(options, env, profile, url) }) };
}

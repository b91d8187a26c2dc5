import type { Command } from 'commander';
import { ApiClient, seg } from '../client/api.js';
import { CliError, Exit, createIo, type GlobalOptions, type Io } from './io.js';
import { readProfile } from './profile.js';

/** What a client command works with: where to send, as whom, for which customer. */
export interface Session {
  io: Io;
  client: ApiClient;
  customer: string;
  /** `/{customer}` percent-encoded, the prefix of every customer-scoped path. */
  base: string;
}

/** The global flags of the command (commander merges them from the root). */
export function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals() as GlobalOptions;
}

/** Resolves deployment, token and customer by flag > env > saved profile (DESIGN.md runtime contract). */
export function connect(command: Command, env: NodeJS.ProcessEnv = process.env): Session {
  const options = globalsOf(command);
  const io = createIo(options, env);
  const profile = readProfile(env);
  const url = options.url ?? env.SCANHUB_URL ?? profile?.url;
  const token = options.token ?? env.SCANHUB_TOKEN ?? (profile && (!options.url || options.url === profile.url) ? profile.token : undefined);
  const customer = options.customer ?? env.SCANHUB_CUSTOMER ?? profile?.customer;
  if (!url) throw new CliError('no deployment configured: run `scanhub login --url URL` or set SCANHUB_URL', Exit.AUTH);
  if (!token) throw new CliError('not logged in: run `scanhub login` or set SCANHUB_TOKEN', Exit.AUTH);
  if (!customer) throw new CliError('no customer known: pass --customer or set SCANHUB_CUSTOMER', Exit.USAGE);
  return { io, client: new ApiClient(url, token), customer, base: `/${seg(customer)}` };
}

/** Like connect, but needs only the URL (login, provisioning). */
export function connectAnonymous(command: Command, env: NodeJS.ProcessEnv = process.env): { io: Io; client: ApiClient } {
  const options = globalsOf(command);
  const io = createIo(options, env);
  const url = options.url ?? env.SCANHUB_URL ?? readProfile(env)?.url;
  if (!url) throw new CliError('no deployment URL: pass --url or set SCANHUB_URL', Exit.USAGE);
  return { io, client: new ApiClient(url) };
}

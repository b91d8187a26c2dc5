import type { Command } from 'commander';
import { claimsOf, connect, connectAnonymous, globalsOf } from './connect.js';
import { CliError, Exit, confirmAction, createIo, formatTime, printObject, promptSecret, promptText, readStdin, success, type Io } from './io.js';
import { profileFile, removeProfile, saveProfile } from './profile.js';
import { looksLikeApiKey } from '../auth/api-keys.js';
import { ApiClient, ApiError, untrustedCertificate } from '../client/api.js';
import type { ApiKey } from './api-keys.js';
import { presentedCa } from '../client/presented-ca.js';

interface LoginResponse {
  id_token: string;
  token_type: 'Bearer';
  expires_in: number;
  customer_id: string;
}

interface LoginOptions {
  email?: string;
  passwordStdin?: boolean;
  invitation?: string | boolean;
}

/**
 * `post`, with a refused login said as it is: the general advice for a 401 ("run scanhub login")
 * would send the user back to the command that just failed.
 */
async function authenticate(client: ApiClient, path: string, body: object): Promise<LoginResponse> {
  try {
    return await client.post<LoginResponse>(path, body);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw new CliError(`not authenticated: ${error.details.replace(/\.$/, '')}`, Exit.AUTH);
    throw error;
  }
}

/**
 * `authenticate`; when the deployment's certificate is not trusted and a person is at the terminal,
 * shows the fingerprint of the CA it chains to and, once they accept, trusts it (trust on first
 * use). Piped, the refusal names --ca-cert. Returns the client that worked.
 */
async function authenticateTrusting(io: Io, client: ApiClient, path: string, body: object): Promise<{ client: ApiClient; response: LoginResponse }> {
  try {
    return { client, response: await authenticate(client, path, body) };
  } catch (error) {
    if (!untrustedCertificate(error) || client.ca || !io.interactive) throw error;
    const ca = await presentedCa(client.baseUrl);
    if (!ca) throw error;
    io.err(
      `The certificate of ${client.baseUrl} is not trusted. It chains to the CA "${ca.subject}",\n` +
        `SHA-256 fingerprint ${ca.fingerprint}\n` +
        'Compare it with the fingerprint `scanhub operator ca` prints on the server.',
    );
    await confirmAction(io, 'Trust this CA for this deployment (saved in the profile)?', undefined);
    const trusting = new ApiClient(client.baseUrl, undefined, { ca: ca.pem });
    return { client: trusting, response: await authenticate(trusting, path, body) };
  }
}

async function readPassword(io: Io, options: LoginOptions, message: string): Promise<string> {
  if (options.passwordStdin) {
    const password = await readStdin();
    if (!password) throw new CliError('no password on standard input', Exit.USAGE);
    return password;
  }
  return promptSecret(io, message, '--password-stdin');
}

/** `scanhub login`, `logout`, `whoami`. */
export function registerLoginCommands(program: Command): void {
  program
    .command('login')
    .description('log in to a deployment and save the profile (mode 0600)')
    .option('--email <email>', 'e-mail address (prompted on a TTY)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--invitation [token]', 'accept an invitation and set a password (token prompted, or env SCANHUB_INVITATION_TOKEN)')
    .action(async (options: LoginOptions, command: Command) => {
      const { io, client: given } = connectAnonymous(command);
      let client = given;
      let response: LoginResponse;
      let email = options.email;
      if (options.invitation) {
        const token =
          typeof options.invitation === 'string'
            ? options.invitation
            : process.env.SCANHUB_INVITATION_TOKEN || (await promptText(io, 'Invitation token:', '--invitation TOKEN'));
        const password = await readPassword(io, options, 'New password (at least 12 characters):');
        ({ client, response } = await authenticateTrusting(io, client, '/auth/accept-invitation', { invitation_token: token, password }));
      } else {
        email ??= await promptText(io, 'E-mail:', '--email');
        const password = await readPassword(io, options, 'Password:');
        ({ client, response } = await authenticateTrusting(io, client, '/auth/login', { email, password }));
      }
      const me = await new ApiClient(client.baseUrl, response.id_token, { ca: client.ca }).get<{ email: string }>(
        `/${encodeURIComponent(response.customer_id)}/me`,
      );
      const file = saveProfile({
        url: client.baseUrl,
        token: response.id_token,
        customer: response.customer_id,
        email: me.email,
        expires_at: Date.now() + response.expires_in * 1000,
        ...(client.ca ? { ca_cert: client.ca } : {}),
      });
      if (io.json) io.out(JSON.stringify(response, null, 2));
      success(io, `Logged in to ${client.baseUrl} as ${me.email} (customer ${response.customer_id}); profile saved to ${file}.`);
    });

  program
    .command('logout')
    .description('forget the saved profile')
    .action((_options: unknown, command: Command) => {
      const io = createIo(globalsOf(command));
      const file = profileFile();
      if (!removeProfile()) {
        io.err('Not logged in: there was no saved profile.');
        return;
      }
      success(io, `Logged out: removed ${file}.`);
    });

  program
    .command('whoami')
    .description('show the user the token (or API key) belongs to')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      const me = await session.client.get<{ id: string; email: string; roles: string[]; permissions: string[] }>(
        `${session.base}/me`,
      );
      const token = session.client.token ?? '';
      const key = looksLikeApiKey(token) ? await session.client.get<ApiKey>('/api-keys/current') : undefined;
      printObject(session.io, me, [
        { header: 'email', value: (u) => u.email },
        { header: 'id', value: (u) => u.id },
        { header: 'customer', value: () => session.customer },
        { header: 'roles', value: (u) => u.roles.join(',') },
        ...(key
          ? [
              { header: 'api key', value: () => `${key.name} (${key.id})` },
              { header: 'permissions', value: (u: { permissions: string[] }) => u.permissions.join(',') },
            ]
          : []),
        { header: 'url', value: () => session.client.baseUrl },
        { header: key ? 'key expires' : 'token expires', value: () => (key ? formatTime(session.io, key.expires_at) || 'never' : tokenExpiry(session.io, token)) },
      ]);
    });
}

/** When an IdToken expires, from its own `exp` (it may come from the environment, not the profile). */
function tokenExpiry(io: Io, token: string): string {
  const exp = claimsOf(token)?.exp;
  return exp === undefined ? '' : formatTime(io, exp * 1000);
}

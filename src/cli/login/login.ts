import type { Command } from 'commander';
import { MIN_PASSWORD_LENGTH } from '../../auth/passwords.js';
import { ApiClient, ApiError, seg, untrustedCertificate } from '../../client/api.js';
import { acceptInvitation, logIn, whoAmI, type LoginResponse } from '../../client/auth.js';
import { presentedCa } from '../../client/presented-ca.js';
import { CliError, Exit, confirmAction, promptNewSecret, promptSecret, promptText, readStdin, success, type Io } from '../io.js';
import { saveProfile } from '../profile.js';
import { connectAnonymous } from '../session.js';
import { examples } from '../help.js';

/** How one attempt authenticates with a client: logging in, or accepting an invitation. */
type Authentication = (client: ApiClient) => Promise<LoginResponse>;

interface LoginOptions {
  email?: string;
  passwordStdin?: boolean;
  invitation?: string | boolean;
}

/**
 * The attempt, with a refused login said as it is: the general advice for a 401 ("run scanhub login")
 * would send the user back to the command that just failed.
 */
async function authenticate(client: ApiClient, attempt: Authentication): Promise<LoginResponse> {
  try {
    return await attempt(client);
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
async function authenticateTrusting(io: Io, client: ApiClient, attempt: Authentication): Promise<{ client: ApiClient; response: LoginResponse }> {
  try {
    return { client, response: await authenticate(client, attempt) };
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
    return { client: trusting, response: await authenticate(trusting, attempt) };
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

/** The new password of an invitation: checked here before it is sent, and typed twice at a prompt. */
async function readNewPassword(io: Io, options: LoginOptions): Promise<string> {
  if (!options.passwordStdin) return promptNewSecret(io, 'password', MIN_PASSWORD_LENGTH, '--password-stdin');
  const password = await readPassword(io, options, '');
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new CliError(`the new password on standard input has ${[...password].length} characters; it needs at least ${MIN_PASSWORD_LENGTH}`, Exit.USAGE);
  }
  return password;
}

/** `scanhub login`: logs in (or accepts an invitation) and saves the profile. */
export function registerLoginCommand(program: Command): void {
  program
    .command('login')
    .addHelpText('after', examples(['scanhub login --url http://127.0.0.1:8080 --email admin@localhost', 'scanhub login --url https://scanhub.example --invitation']))
    .description('log in to a deployment and save the profile (mode 0600)')
    .option('--email <email>', 'e-mail address (prompted on a TTY)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--invitation [token]', 'accept an invitation and set a password (token prompted, or env SCANHUB_INVITATION_TOKEN)')
    .action(async (options: LoginOptions, command: Command) => {
      const { io, client: given } = connectAnonymous(command);
      let client = given;
      let response: LoginResponse;
      if (options.invitation) {
        const token =
          typeof options.invitation === 'string'
            ? options.invitation
            : process.env.SCANHUB_INVITATION_TOKEN || (await promptText(io, 'Invitation token:', '--invitation TOKEN'));
        const password = await readNewPassword(io, options);
        ({ client, response } = await authenticateTrusting(io, client, (c) => acceptInvitation(c, token, password)));
      } else {
        const email = options.email ?? (await promptText(io, 'E-mail:', '--email'));
        const password = await readPassword(io, options, 'Password:');
        ({ client, response } = await authenticateTrusting(io, client, (c) => logIn(c, email, password)));
      }
      const me = await whoAmI({ client: new ApiClient(client.baseUrl, response.id_token, { ca: client.ca }), base: `/${seg(response.customer_id)}` });
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
}

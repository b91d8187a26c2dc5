import { Command, Option } from 'commander';
import { collectAll, seg } from '../client/api.js';
import { connect, type Session } from './connect.js';
import { confirmAction, formatTime, printList, printObject, success, type Column, type Io } from './io.js';

/** A user as the API returns it (spec 2.6). */
export interface User {
  id: string;
  first_name?: string;
  last_name?: string;
  email: string;
  created: number;
  last_updated: number;
  language?: string;
  roles: string[];
  permissions?: string[];
}

const columns = (io: Io): Column<User>[] => [
  { header: 'ID', value: (u) => u.id },
  { header: 'EMAIL', value: (u) => u.email },
  { header: 'NAME', value: (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') },
  { header: 'ROLES', value: (u) => u.roles.join(',') },
  { header: 'CREATED', value: (u) => formatTime(io, u.created) },
];

const fields = (io: Io): Column<User>[] => [
  ...columns(io).map((c) => ({ ...c, header: c.header.toLowerCase() })),
  { header: 'permissions', value: (u) => (u.permissions ?? []).join(',') },
];

/** `scanhub users list|get|create|delete|invite`. */
export function registerUserCommands(program: Command): void {
  const users = program.command('users').description('users of the customer');

  users
    .command('list')
    .description('list the users')
    .action(async (_options: unknown, command: Command) => {
      const session = await connect(command);
      printList(session.io, await collectAll<User>(session.client, `${session.base}/users`), columns(session.io));
    });

  users
    .command('get <user-id>')
    .description('show one user')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      printObject(session.io, await session.client.get<User>(`${session.base}/users/${seg(userId)}`), fields(session.io));
    });

  users
    .command('create')
    .description('create a user (then `scanhub users invite` so they can set a password)')
    .requiredOption('--email <email>', 'e-mail address')
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .addOption(new Option('--role <role>', 'role').choices(['USER_ROLE', 'ADMIN_ROLE']).default('USER_ROLE'))
    .action(async (options: { email: string; firstName: string; lastName: string; role: string }, command: Command) => {
      const session = await connect(command);
      const user = await session.client.post<User>(`${session.base}/users`, {
        first_name: options.firstName,
        last_name: options.lastName,
        role: options.role,
        email: options.email,
      });
      printObject(session.io, user, fields(session.io));
      success(session.io, `Created user ${user.email} (${user.id}); invite them with \`scanhub users invite ${user.id}\`.`);
    });

  users
    .command('delete <user-id>')
    .description('delete a user')
    .option('--yes', 'do not ask for confirmation')
    .action(async (userId: string, options: { yes?: boolean }, command: Command) => {
      const session = await connect(command);
      await confirmAction(session.io, `Delete user ${userId}?`, options.yes);
      await session.client.delete(`${session.base}/users/${seg(userId)}`);
      success(session.io, `Deleted user ${userId}.`);
    });

  users
    .command('invite <user-id>')
    .description('create an invitation token (24 h, single use) with which the user sets a password')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const invitation = await session.client.post<{ invitation_token: string; expires_at: number }>(
        `${session.base}/users/${seg(userId)}/invitation`,
      );
      printObject(session.io, invitation, [
        { header: 'invitation_token', value: (i) => i.invitation_token },
        { header: 'expires_at', value: (i) => formatTime(session.io, i.expires_at) },
      ]);
      success(
        session.io,
        `Invitation created; the user runs: scanhub login --url ${session.client.baseUrl} --invitation ${invitation.invitation_token}`,
      );
    });
}

import type { Command } from 'commander';
import { inviteUser, resetPassword, type Invitation } from '../../client/users.js';
import { formatTime, printObject, success } from '../io.js';
import { connect, type Session } from '../session.js';
import { userOf } from './ref.js';

/** Prints a token with which a user sets a password, and the command the user runs with it. */
function showToken(session: Session, invitation: Invitation, done: string): void {
  printObject(session.io, invitation, [
    { header: 'invitation_token', value: (i) => i.invitation_token },
    { header: 'expires_at', value: (i) => formatTime(session.io, i.expires_at) },
  ]);
  success(session.io, `${done}; the user runs: scanhub login --url ${session.client.baseUrl} --invitation ${invitation.invitation_token}`);
}

/** `scanhub users invite <user>`. */
export function registerInviteCommand(users: Command): void {
  users
    .command('invite <user>')
    .description('create an invitation token (24 h, single use) with which a user without a password sets one (by e-mail or id)')
    .addHelpText('after', '\nExample:\n  scanhub users invite ada@example.com')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const user = await userOf(session, ref);
      showToken(session, await inviteUser(session, user.id), `Invitation for ${user.email} created`);
    });
}

/** `scanhub users reset-password <user>`. */
export function registerResetPasswordCommand(users: Command): void {
  users
    .command('reset-password <user>')
    .description('create a token (24 h, single use) with which a user who has a password sets a new one (administrators signed in; by e-mail or id)')
    .addHelpText(
      'after',
      '\nThe old password works until the token is used. A lost administrator password on the server: `scanhub operator users reset-password`.\n' +
        '\nExample:\n  scanhub users reset-password ada@example.com',
    )
    .action(async (ref: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const user = await userOf(session, ref);
      showToken(session, await resetPassword(session, user.id), `Password reset for ${user.email} created`);
    });
}

import type { Command } from 'commander';
import { inviteUser } from '../../client/users.js';
import { formatTime, printObject, success } from '../io.js';
import { connect } from '../session.js';

/** `scanhub users invite <user-id>`. */
export function registerInviteCommand(users: Command): void {
  users
    .command('invite <user-id>')
    .description('create an invitation token (24 h, single use) with which the user sets a password')
    .action(async (userId: string, _options: unknown, command: Command) => {
      const session = await connect(command);
      const invitation = await inviteUser(session, userId);
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

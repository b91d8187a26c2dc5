import type { User } from '../../../src/client/users';
import { Button } from '../../components/button';
import { customerPath } from '../../lib/api';
import { can, currentSession } from '../../lib/session';

/** What a user's row offers; the section runs it. */
export type UserAction = 'roles' | 'invite' | 'reset' | 'delete';

/** A path below the user: `/acme/users/<id>/invitation`. */
export const userPath = (user: User, rest = '') => customerPath(`/users/${encodeURIComponent(user.id)}${rest}`);

/**
 * The actions the signed-in user may take on users: changing, inviting and deleting with
 * `user.write`; a password reset only as an administrator (signed in with an IdToken, as the
 * console always is: docs/users.md "Who may do what").
 */
export function userActions(): UserAction[] {
  if (!can('user.write')) return [];
  const admin = currentSession()?.user.roles.includes('ADMIN_ROLE') ?? false;
  return admin ? ['roles', 'invite', 'reset', 'delete'] : ['roles', 'invite', 'delete'];
}

const LABELS: Record<UserAction, string> = { roles: 'Roles', invite: 'Invite', reset: 'Reset password', delete: 'Delete' };

interface Props {
  user: User;
  busy: UserAction | undefined;
  onAction: (action: UserAction, user: User) => void;
}

/** A row's buttons, each named for what it does (the row names the user). */
export function UserActions({ user, busy, onAction }: Props) {
  return (
    <div class="row-actions">
      {userActions().map((action) => (
        <Button key={action} kind={action === 'delete' ? 'danger' : 'secondary'} busy={busy === action} disabled={busy !== undefined} onClick={() => onAction(action, user)}>
          {LABELS[action]}
        </Button>
      ))}
    </div>
  );
}

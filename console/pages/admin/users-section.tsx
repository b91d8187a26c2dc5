import { useState } from 'preact/hooks';
import type { Invitation, User } from '../../../src/client/users';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorMessage } from '../../components/error-message';
import { Pager } from '../../components/pager';
import { StatusMessage } from '../../components/status-message';
import { api } from '../../lib/api';
import { can } from '../../lib/session';
import { NewUserDialog, type CreatedUser } from './new-user-dialog';
import { SectionHeading } from './section-heading';
import { TokenDialog, type TokenKind } from './token-dialog';
import { useAll } from './use-all';
import { userPath, type UserAction } from './user-actions';
import { UserRolesDialog } from './user-roles-dialog';
import { UserTable } from './user-table';

const PAGE_SIZE = 50;

type OpenDialog =
  | { kind: 'new' }
  | { kind: 'token'; user: User; token: TokenKind; invitation: Invitation }
  | { kind: 'roles' | 'delete'; user: User };

/** The customer's users: invite one, change roles, hand out an invitation or a password reset, delete. */
export function UsersSection() {
  const users = useAll<User>('/users');
  const [page, setPage] = useState(0);
  const [dialog, setDialog] = useState<OpenDialog>();
  const [busy, setBusy] = useState<{ id: string; action: UserAction }>();
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState<string>();
  const all = users.items ?? [];
  const pageCount = Math.max(1, Math.ceil(all.length / PAGE_SIZE));
  const shown = all.slice(Math.min(page, pageCount - 1) * PAGE_SIZE).slice(0, PAGE_SIZE);

  const issue = async (user: User, token: TokenKind) => {
    setBusy({ id: user.id, action: token === 'invitation' ? 'invite' : 'reset' });
    try {
      const invitation = await api.post<Invitation>(userPath(user, token === 'invitation' ? '/invitation' : '/password-reset'));
      setDialog({ kind: 'token', user, token, invitation });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };
  const onAction = (action: UserAction, user: User) => {
    setError(undefined);
    setStatus(undefined);
    if (action === 'invite') return void issue(user, 'invitation');
    if (action === 'reset') return void issue(user, 'password-reset');
    setDialog({ kind: action, user });
  };
  const created = ({ user, invitation, error }: CreatedUser) => {
    void users.reload();
    setStatus(`Created user ${user.email}.`);
    if (invitation) return setDialog({ kind: 'token', user, token: 'invitation', invitation });
    setDialog(undefined);
    setError(error);
  };

  return (
    <>
      <SectionHeading title="Users">
        {can('user.write') && (
          <Button kind="primary" onClick={() => setDialog({ kind: 'new' })}>
            New user
          </Button>
        )}
      </SectionHeading>
      <StatusMessage text={status} />
      <ErrorMessage error={error ?? users.error} />
      {users.items === undefined && !users.error ? (
        <p class="loading">Loading users…</p>
      ) : (
        <>
          <UserTable users={shown} busy={busy} onAction={onAction} />
          {all.length > PAGE_SIZE && <Pager page={Math.min(page, pageCount - 1)} pageSize={PAGE_SIZE} total={all.length} noun="Users" onPage={setPage} />}
        </>
      )}
      {dialog?.kind === 'new' && <NewUserDialog onCreated={created} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'token' && <TokenDialog user={dialog.user} kind={dialog.token} invitation={dialog.invitation} onClose={() => setDialog(undefined)} />}
      {dialog?.kind === 'roles' && (
        <UserRolesDialog
          user={dialog.user}
          onClose={() => setDialog(undefined)}
          onSaved={(user) => {
            void users.reload();
            setDialog(undefined);
            setStatus(`${user.email} now has the roles ${user.roles.join(', ')}.`);
          }}
        />
      )}
      {dialog?.kind === 'delete' && (
        <ConfirmDialog
          title={`Delete ${dialog.user.email}?`}
          confirm="Delete"
          onClose={() => setDialog(undefined)}
          onConfirm={async () => {
            await api.delete(userPath(dialog.user));
            await users.reload();
            setDialog(undefined);
            setStatus(`Deleted user ${dialog.user.email}.`);
          }}
        >
          <p>They can no longer sign in, their sessions end at once and their API keys stop working. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

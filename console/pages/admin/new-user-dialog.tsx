import { useState } from 'preact/hooks';
import type { Invitation, User } from '../../../src/client/users';
import { ROLES } from '../../../src/domain/permissions';
import { Button } from '../../components/button';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { SelectField } from '../../components/select-field';
import { api, customerPath } from '../../lib/api';
import { useSubmit } from '../../lib/use-submit';
import { userPath } from './user-actions';

/** A user made, and the invitation issued for them (or why it could not be). */
export interface CreatedUser {
  user: User;
  invitation?: Invitation;
  error?: unknown;
}

/**
 * Creates a user (`POST /{c}/users`, one role, no password) and invites them at once: a user
 * without a password can do nothing until they redeem an invitation (docs/users.md).
 */
export function NewUserDialog({ onCreated, onClose }: { onCreated: (created: CreatedUser) => void; onClose: () => void }) {
  const [firstName, setFirstName] = useState('');
  const [lastName, setLastName] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<string>('USER_ROLE');
  const { busy, error, submit } = useSubmit(async () => {
    const user = await api.post<User>(customerPath('/users'), { first_name: firstName, last_name: lastName, email, role });
    let invitation: Invitation;
    try {
      invitation = await api.post<Invitation>(userPath(user, '/invitation'));
    } catch (failure) {
      // The user exists now: the page shows why the invitation failed, beside the new row.
      return onCreated({ user, error: failure });
    }
    onCreated({ user, invitation });
  });
  return (
    <Dialog title="New user" onClose={onClose}>
      <form class="form" onSubmit={submit} noValidate>
        <Field label="First name" required maxLength={200} autofocus value={firstName} onValue={setFirstName} />
        <Field label="Last name" required maxLength={200} value={lastName} onValue={setLastName} />
        <Field label="Email" type="email" required maxLength={320} autocomplete="off" value={email} onValue={setEmail} hint="Unique across the deployment; the user signs in with it." />
        <SelectField label="Role" value={role} onValue={setRole} options={ROLES.map((r) => ({ value: r, label: r }))} />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            Create and invite
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

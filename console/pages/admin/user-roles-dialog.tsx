import { useState } from 'preact/hooks';
import type { User } from '../../../src/client/users';
import { ROLES } from '../../../src/domain/permissions';
import { Button } from '../../components/button';
import { CheckboxGroup } from '../../components/checkbox-group';
import { Dialog } from '../../components/dialog';
import { ErrorMessage } from '../../components/error-message';
import { api } from '../../lib/api';
import { useSubmit } from '../../lib/use-submit';
import { userPath } from './user-actions';

/**
 * Changes a user's roles (`PATCH /{c}/users/{id}` with `roles`). The API refuses what the caller
 * may not hand out and the removal of the last administrator, and says why; a change of roles
 * signs the user out everywhere (docs/users.md "Changing a user").
 */
export function UserRolesDialog({ user, onSaved, onClose }: { user: User; onSaved: (user: User) => void; onClose: () => void }) {
  const [roles, setRoles] = useState<string[]>(user.roles);
  const { busy, error, submit } = useSubmit(async () => onSaved(await api.patch<User>(userPath(user), { roles })));
  return (
    <Dialog title={`Roles of ${user.email}`} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <CheckboxGroup legend="Roles" options={ROLES} selected={roles} onChange={setRoles} />
        <p class="hint">A change of roles signs the user out: they sign in again to act with the new ones.</p>
        <ErrorMessage error={error} />
        <div class="actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" kind="primary" busy={busy}>
            Save
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

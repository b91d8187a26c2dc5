import type { User } from '../../../src/client/users';
import { Badge } from '../../components/badge';
import { Table, type Column } from '../../components/table';
import { dateTime } from '../../lib/time';
import { UserActions, userActions, type UserAction } from './user-actions';

interface Props {
  users: readonly User[];
  busy: { id: string; action: UserAction } | undefined;
  onAction: (action: UserAction, user: User) => void;
}

const fullName = (user: User) => [user.first_name, user.last_name].filter(Boolean).join(' ');

/** One page of users: a row each, named by the e-mail address (what they sign in with). */
export function UserTable({ users, busy, onAction }: Props) {
  const columns: Column<User>[] = [
    { header: 'Email', cell: (u) => u.email, rowHeader: true, class: 'name' },
    { header: 'Name', cell: fullName },
    {
      header: 'Roles',
      cell: (u) => (
        <span class="badges">
          {u.roles.map((role) => (
            <Badge key={role} tone={role === 'ADMIN_ROLE' ? 'info' : 'neutral'}>
              {role}
            </Badge>
          ))}
        </span>
      ),
    },
    { header: 'Created', cell: (u) => dateTime(u.created), class: 'nowrap' },
  ];
  if (userActions().length > 0) {
    columns.push({ header: 'Actions', cell: (u) => <UserActions user={u} busy={busy?.id === u.id ? busy.action : undefined} onAction={onAction} /> });
  }
  return <Table caption="Users" columns={columns} rows={users} rowKey={(u) => u.id} empty="No users." />;
}

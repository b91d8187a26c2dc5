import { ROLES, permissionsOf } from '../../../src/domain/permissions';
import { Table } from '../../components/table';
import { SectionHeading } from './section-heading';

/**
 * The roles and what each grants. They are fixed by the deployment (src/domain/permissions.ts,
 * docs/users.md): the API has no call to create or change one, so this section only lists them.
 */
export function RolesSection() {
  return (
    <>
      <SectionHeading title="Roles" />
      <p>
        Roles are fixed: a user holds one or both, and an API key holds the permissions chosen for it. Change a user's roles in <a href="#/admin/users">Users</a>.
      </p>
      <Table
        caption="Roles"
        columns={[
          { header: 'Role', cell: (role) => <span class="mono">{role}</span>, rowHeader: true, class: 'nowrap' },
          {
            header: 'Permissions',
            cell: (role) => (
              <ul class="permission-list">
                {permissionsOf([role]).map((permission) => (
                  <li key={permission} class="mono">
                    {permission}
                  </li>
                ))}
              </ul>
            ),
          },
        ]}
        rows={ROLES}
        rowKey={(role) => role}
        empty="No roles."
      />
    </>
  );
}

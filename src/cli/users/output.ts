import type { User } from '../../client/users.js';
import { formatTime, type Column, type Io } from '../io.js';

/** The columns of the user table. */
export const userColumns = (io: Io): Column<User>[] => [
  { header: 'ID', value: (u) => u.id },
  { header: 'EMAIL', value: (u) => u.email },
  { header: 'NAME', value: (u) => [u.first_name, u.last_name].filter(Boolean).join(' ') },
  { header: 'ROLES', value: (u) => u.roles.join(',') },
  { header: 'CREATED', value: (u) => formatTime(io, u.created) },
];

/** The fields of one user (`get`, `create`): the columns and the permissions. */
export const userFields = (io: Io): Column<User>[] => [
  ...userColumns(io).map((c) => ({ ...c, header: c.header.toLowerCase() })),
  { header: 'permissions', value: (u) => (u.permissions ?? []).join(',') },
];

/** Every permission a role can grant (docs/users.md "Who may do what"). */
export const PERMISSIONS = [
  'event.read',
  'event.export',
  'gateway.read',
  'gateway.write',
  'gateway.provision',
  'gateway.command',
  'jobconfig.read',
  'jobconfig.write',
  'jobanalysis.run',
  'feature.read',
  'asset.download',
  'user.read',
  'user.write',
  'audit.read',
  'apikey.write',
  'retention.read',
  'retention.write',
  'webhook.write',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['USER_ROLE', 'ADMIN_ROLE'] as const;
export type Role = (typeof ROLES)[number];

const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  ADMIN_ROLE: PERMISSIONS,
  USER_ROLE: [
    'event.read',
    'event.export',
    'gateway.read',
    'jobconfig.read',
    'jobanalysis.run',
    'feature.read',
    'asset.download',
  ],
};

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions the given roles grant, in the order of PERMISSIONS, without duplicates. */
export function permissionsOf(roles: readonly string[]): Permission[] {
  const granted = new Set<Permission>();
  for (const role of roles) for (const p of ROLE_PERMISSIONS[role as Role] ?? []) granted.add(p);
  return PERMISSIONS.filter((p) => granted.has(p));
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** The permissions that `roles` grant and `held` lacks, in the order of PERMISSIONS: what a caller would hand out beyond its own. */
export function permissionsBeyond(held: readonly Permission[], roles: readonly string[]): Permission[] {
  return permissionsOf(roles).filter((p) => !held.includes(p));
}

/** Whether two lists name the same roles, in any order. */
export function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((role) => b.includes(role)) && b.every((role) => a.includes(role));
}

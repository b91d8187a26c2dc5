import type { FunctionComponent } from 'preact';
import { ApiKeysSection } from './api-keys-section';
import { AuditSection } from './audit-section';
import { RetentionSection } from './retention-section';
import { RolesSection } from './roles-section';
import { UsersSection } from './users-section';
import { WebhooksSection } from './webhooks/webhooks-section';

/** A section of the Admin page: its route below `/admin`, its link, and the permission it needs to be offered. */
export interface AdminSection {
  path: string;
  title: string;
  permission: string;
  component: FunctionComponent;
}

/** The sections in the order of the Admin page's own navigation; the first the user may see is where `#/admin` leads. */
export const ADMIN_SECTIONS: AdminSection[] = [
  { path: '/admin/users', title: 'Users', permission: 'user.read', component: UsersSection },
  { path: '/admin/roles', title: 'Roles', permission: 'user.read', component: RolesSection },
  { path: '/admin/api-keys', title: 'API keys', permission: 'apikey.write', component: ApiKeysSection },
  { path: '/admin/audit', title: 'Audit log', permission: 'audit.read', component: AuditSection },
  { path: '/admin/retention', title: 'Retention', permission: 'retention.read', component: RetentionSection },
  { path: '/admin/webhooks', title: 'Webhooks', permission: 'webhook.write', component: WebhooksSection },
];

import { error } from './scenarios.js';
import type { Foundation } from './world.js';

export const ADMIN_PERMISSIONS = [
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
];
export const USER_PERMISSIONS = ['event.read', 'event.export', 'gateway.read', 'jobconfig.read', 'jobanalysis.run', 'feature.read', 'asset.download'];

export const bearer = (token: string) => `Bearer ${token}`;
export const asAdmin = (w: Foundation) => bearer(w.admin.token);
export const asUser = (w: Foundation) => bearer(w.user.token);
/** The 403 of a USER_ROLE caller without the permission. */
export const lacks = (permission: string) =>
  error('Forbidden', `Your role USER_ROLE lacks the permission "${permission}" this call needs; ask an administrator.`);


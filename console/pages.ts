import type { FunctionComponent } from 'preact';

/** A page of the signed-in console: its route, its link, who may see it, and its lazily loaded component. */
export interface PageEntry {
  /** The hash route (`/gateways`); routes below it (`/admin/users`) belong to it too. */
  path: string;
  /** The navigation link's text, the page's heading and the document title. */
  title: string;
  /** The permission without which the page is neither linked nor shown. */
  permission: string;
  /** The page's own chunk: loaded when the page is first shown, never before (docs/console.md). */
  load: () => Promise<FunctionComponent>;
}

/** The pages, in the order of the navigation; the first is where signing in leads. */
export const PAGES: PageEntry[] = [
  { path: '/gateways', title: 'Gateways', permission: 'gateway.read', load: () => import('./pages/gateways/gateways-page').then((m) => m.GatewaysPage) },
  { path: '/scanners', title: 'Scanners', permission: 'event.read', load: () => import('./pages/scanners/scanners-page').then((m) => m.ScannersPage) },
  { path: '/live', title: 'Live', permission: 'event.read', load: () => import('./pages/live/live-page').then((m) => m.LivePage) },
  { path: '/events', title: 'Events', permission: 'event.read', load: () => import('./pages/events/events-page').then((m) => m.EventsPage) },
  { path: '/jobs', title: 'Jobs', permission: 'jobconfig.read', load: () => import('./pages/jobs/jobs-page').then((m) => m.JobsPage) },
  // Admin is for those who may manage users (DESIGN.md "Web console").
  { path: '/admin', title: 'Admin', permission: 'user.write', load: () => import('./pages/admin/admin-page').then((m) => m.AdminPage) },
];

/**
 * Pages of one thing, at a route below a page's path plus the thing's id (`#/gateways/{id}`): not
 * in the navigation, which marks the page they lie below; `path` ends with `/`.
 */
export const DETAIL_PAGES: PageEntry[] = [
  { path: '/gateways/', title: 'Gateway', permission: 'gateway.read', load: () => import('./pages/gateways/gateway-page').then((m) => m.GatewayPage) },
];

/** The page of the navigation a route is under: its own, or the one it lies below (`/admin/users` -> Admin). */
export function sectionOf(path: string): PageEntry | undefined {
  return PAGES.find((page) => path === page.path || path.startsWith(`${page.path}/`));
}

/** The page a route shows: a detail page (`/gateways/{id}`), else its section's. */
export function pageOf(path: string): PageEntry | undefined {
  return DETAIL_PAGES.find((page) => path.startsWith(page.path) && path.length > page.path.length) ?? sectionOf(path);
}


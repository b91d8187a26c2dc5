import { useEffect, useState } from 'preact/hooks';

/** Where the console is: the hash route `#/gateways?x=1` as path `/gateways` and its query. */
export interface Route {
  path: string;
  query: URLSearchParams;
  /** The hash as it was, to come back to (`#/gateways?x=1`). */
  hash: string;
}

/** Hash routes keep the console one page that `serve` answers at `/` (docs/console.md). */
export function parseRoute(hash: string): Route {
  const [path = '', query = ''] = hash.replace(/^#/, '').split('?', 2);
  return { path: path || '/', query: new URLSearchParams(query), hash: hash || '#/' };
}

/** Goes to a route (`#/gateways`). */
export function navigate(hash: string): void {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

/** Goes to a route in place of the current one (the back button skips it): for redirects. */
export function redirect(hash: string): void {
  history.replaceState(history.state, '', hash);
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

/** The sign-in route that leads back to `next` (a hash route) once signed in. */
export function signInRoute(next: string): string {
  return next && next !== '#/' && !next.startsWith('#/sign-in') ? `#/sign-in?next=${encodeURIComponent(next)}` : '#/sign-in';
}

/** Where signing in leads: the `next` of the route if it is a hash route of the console, else the board. */
export function afterSignIn(route: Route): string {
  const next = route.query.get('next');
  return next && /^#\/[a-z]/.test(next) && !next.startsWith('#/sign-in') ? next : '#/gateways';
}

/** The current route, re-rendering on every change of the hash. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute((route) => (route.hash === (location.hash || '#/') ? route : parseRoute(location.hash)));
    window.addEventListener('hashchange', onChange);
    // A child's effect (a Redirect) may have changed the hash before this listener was added.
    onChange();
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

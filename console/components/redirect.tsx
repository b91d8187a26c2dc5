import { useEffect } from 'preact/hooks';
import { redirect } from '../lib/router';

/** Goes to another route once rendered (signed out on a page, signed in on the sign-in page). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => redirect(to), [to]);
  return null;
}

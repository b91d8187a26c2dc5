import { useEffect, useState } from 'preact/hooks';
import type { Me } from '../../src/client/auth';

/** Who is signed in: the IdToken, its customer and the user from `GET /{customer_id}/me`. */
export interface Session {
  token: string;
  customerId: string;
  user: Me;
}

/** Why the last session ended, for the sign-in page to say. */
export type SessionEnd = 'signed-out' | 'expired';

// sessionStorage: the session lives as long as the tab (a reload keeps it, another tab does not
// share it), never in a URL or a cookie (DESIGN.md "Web console").
const STORAGE_KEY = 'scanhub.session';

let current: Session | undefined = restore();
let lastEnd: SessionEnd | undefined;
const listeners = new Set<() => void>();

function restore(): Session | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return stored?.token && stored.customerId && stored.user ? stored : undefined;
  } catch {
    return undefined;
  }
}

function changed(): void {
  for (const listener of listeners) listener();
}

/** The signed-in session, if any. */
export function currentSession(): Session | undefined {
  return current;
}

/** Starts a session (after signing in or accepting an invitation). */
export function startSession(session: Session): void {
  current = session;
  lastEnd = undefined;
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  changed();
}

/** Ends the session: signed out by the user, or refused by the API (401). */
export function endSession(reason: SessionEnd): void {
  if (!current) return;
  current = undefined;
  lastEnd = reason;
  sessionStorage.removeItem(STORAGE_KEY);
  changed();
}

/** Why the last session ended in this tab, if one did. */
export function lastSessionEnd(): SessionEnd | undefined {
  return lastEnd;
}

/** Whether the signed-in user holds the permission: an action it lacks is not offered (the API refuses it anyway). */
export function can(permission: string): boolean {
  return current?.user.permissions.includes(permission) ?? false;
}

/** The session, re-rendering the component when it starts or ends. */
export function useSession(): Session | undefined {
  const [session, setSession] = useState(current);
  useEffect(() => {
    const listener = () => setSession(current);
    listeners.add(listener);
    listener();
    return () => void listeners.delete(listener);
  }, []);
  return session;
}

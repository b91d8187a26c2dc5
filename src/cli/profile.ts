import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from '../client/config-dir.js';

/** What `scanhub login` saves: where the deployment is and the token for it. */
export interface Profile {
  url: string;
  token: string;
  customer: string;
  email?: string;
  expires_at?: number;
  /** The CA (PEM) the deployment's HTTPS certificate chains to, when trusted by `--ca-cert` or on first use. */
  ca_cert?: string;
}

export function profileFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'profile.json');
}

export function readProfile(env: NodeJS.ProcessEnv = process.env): Profile | undefined {
  try {
    return JSON.parse(readFileSync(profileFile(env), 'utf8')) as Profile;
  } catch {
    return undefined;
  }
}

/** Writes the profile with mode 0600 (it holds a bearer token) in a 0700 directory. */
export function saveProfile(profile: Profile, env: NodeJS.ProcessEnv = process.env): string {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = profileFile(env);
  // Written beside and renamed over: the token is never in a file another user could read,
  // even when an older profile had looser permissions.
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(profile, null, 2) + '\n', { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
  return file;
}

/** Removes the saved profile; false when there was none. */
export function removeProfile(env: NodeJS.ProcessEnv = process.env): boolean {
  const file = profileFile(env);
  try {
    readFileSync(file);
  } catch {
    return false;
  }
  rmSync(file);
  return true;
}

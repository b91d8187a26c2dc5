import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { openStore } from '../../store/open.js';
import { StoreUnavailable, type Store } from '../../store/ports/index.js';
import { resolveDeployment, type Deployment, type DeploymentOptions } from '../deployment.js';
import { CliError, Exit, createIo, type Io } from '../io.js';
import { globalsOf } from '../session.js';

/** The deployment an operator command works on: `--data-dir` (or `--database`), with `--blob-dir`. */
export function deploymentOf(command: Command): Deployment {
  const options = command.optsWithGlobals() as DeploymentOptions;
  return resolveDeployment({ ...options, dataDir: options.dataDir ?? './scanhub-data' });
}

/** Opens the deployment's store (safe while `serve` runs: SQLite's WAL and busy timeout, PostgreSQL's transactions). */
export async function openOperatorStore(command: Command): Promise<{ store: Store; io: Io; blobDir: string }> {
  const { locator, dataDir, blobDir } = deploymentOf(command);
  if (locator.kind === 'sqlite' && !existsSync(locator.file)) {
    throw new CliError(`no scanhub database in ${dataDir}: start \`scanhub serve --data-dir ${dataDir}\` once to create it`, Exit.USAGE);
  }
  try {
    return { store: await openStore(locator, 'server'), io: createIo(globalsOf(command)), blobDir };
  } catch (error) {
    if (error instanceof StoreUnavailable) throw new CliError(`cannot open the database: ${error.message}`, Exit.ERROR);
    throw error;
  }
}

/** Runs `work` with the operator store open and closes it afterwards; `blobDir` is where files go. */
export async function withOperatorStore<T>(command: Command, work: (store: Store, io: Io, blobDir: string) => Promise<T> | T): Promise<T> {
  const { store, io, blobDir } = await openOperatorStore(command);
  try {
    return await work(store, io, blobDir);
  } finally {
    await store.close();
  }
}

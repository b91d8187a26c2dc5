import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { Command, Option } from 'commander';
import { MIN_PASSWORD_LENGTH, hashPassword } from '../auth/passwords.js';
import { operatorAuditEntry } from '../domain/audit.js';
import { customerIdProblem, isCustomerId, isEmailAddress } from '../domain/identifiers.js';
import { openStore } from '../store/open.js';
import { StoreUnavailable, type Store } from '../store/ports/index.js';
import { globalsOf } from './connect.js';
import { addDeploymentOptions, newMasterKey, resolveDeployment, type Deployment, type DeploymentOptions } from './deployment.js';
import { CliError, Exit, createIo, printObject, promptSecret, readStdin, success, type Io } from './io.js';

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

function customerId(value: string): string {
  if (!isCustomerId(value)) throw new CliError(customerIdProblem(value), Exit.USAGE);
  return value;
}

/** `scanhub operator ...`: administration of the local data directory. Returns the group for more verbs. */
export function registerOperatorCommands(program: Command): Command {
  const operator = program
    .command('operator')
    .description('administer the deployment: its data directory, or its PostgreSQL database with --database (works while `serve` runs)')
    .addOption(new Option('--data-dir <dir>', 'data directory').env('SCANHUB_DATA_DIR').default('./scanhub-data'));
  addDeploymentOptions(operator);

  operator
    .command('master-key')
    .description('print a new master key (base64 of 32 random bytes) for SCANHUB_MASTER_KEY or --master-key-file')
    .action(() => {
      process.stdout.write(`${newMasterKey()}\n`);
    });

  const customers = operator.command('customers').description('customers of this deployment');
  customers
    .command('add <customer_id>')
    .description('create a customer with its first administrator')
    .requiredOption('--admin-email <email>', "the administrator's e-mail address")
    .option('--password-stdin', 'read the administrator password from standard input (else prompted)')
    .action(async (id: string, options: { adminEmail: string; passwordStdin?: boolean }, command: Command) => {
      customerId(id);
      if (!isEmailAddress(options.adminEmail)) {
        throw new CliError(`"${options.adminEmail}" is not an e-mail address`, Exit.USAGE);
      }
      const io = createIo(globalsOf(command));
      const password = options.passwordStdin ? await readStdin() : await promptSecret(io, 'Administrator password:', '--password-stdin');
      if (password.length < MIN_PASSWORD_LENGTH) {
        throw new CliError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, Exit.USAGE);
      }
      const passwordHash = await hashPassword(password);
      await withOperatorStore(command, async (store) => {
        const now = Date.now();
        const userId = randomUUID();
        const admin = { id: userId, customer_id: id, email: options.adminEmail, roles: ['ADMIN_ROLE'], password_hash: passwordHash, created: now };
        const audit = operatorAuditEntry(randomUUID(), id, now, 'user.created', { type: 'user', id: userId }, { email: options.adminEmail, roles: admin.roles });
        const outcome = await store.customers.createWithAdmin(id, admin, now, audit);
        if (outcome === 'email-taken') throw new CliError(`a user with the e-mail address ${options.adminEmail} already exists`);
        if (outcome === 'customer-exists') throw new CliError(`customer "${id}" already exists`);
        if (io.json) io.out(JSON.stringify({ customer_id: id, admin: { id: userId, email: options.adminEmail } }, null, 2));
        success(io, `Created customer "${id}" with administrator ${options.adminEmail}.`);
      });
    });

  const features = operator.command('features').description('feature flags per customer');
  features
    .command('set <customer_id> <feature>')
    .description('enable or disable a feature for a customer')
    .option('--enable', 'enable the feature')
    .option('--disable', 'disable the feature')
    .option('--properties <json>', 'additional_properties, a JSON object ("null" clears them)')
    .action(async (id: string, feature: string, options: { enable?: boolean; disable?: boolean; properties?: string }, command: Command) => {
      if (Boolean(options.enable) === Boolean(options.disable)) throw new CliError('give exactly one of --enable and --disable', Exit.USAGE);
      if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(feature)) throw new CliError(`"${feature}" is not a valid feature name`, Exit.USAGE);
      let properties: Record<string, unknown> | null | undefined;
      if (options.properties !== undefined) {
        try {
          properties = JSON.parse(options.properties) as Record<string, unknown> | null;
        } catch (cause) {
          throw new CliError(`--properties is not valid JSON: ${(cause as Error).message}`, Exit.USAGE);
        }
        if (properties !== null && (typeof properties !== 'object' || Array.isArray(properties))) {
          throw new CliError('--properties must be a JSON object or null', Exit.USAGE);
        }
      }
      await withOperatorStore(command, async (store, io) => {
        if (!(await store.customers.exists(id))) throw new CliError(`customer "${id}" does not exist`);
        const now = Date.now();
        const audit = operatorAuditEntry(randomUUID(), id, now, 'feature.set', { type: 'feature', id: feature }, {
          enabled: Boolean(options.enable),
          ...(properties !== undefined ? { additional_properties: properties } : {}),
        });
        const result = await store.features.set(id, feature, Boolean(options.enable), properties, now, audit);
        printObject(io, result, [
          { header: 'feature', value: (f) => f.feature },
          { header: 'enabled', value: (f) => f.enabled },
          { header: 'additional_properties', value: (f) => (f.additional_properties ? JSON.stringify(f.additional_properties) : '') },
        ]);
        success(io, `${options.enable ? 'Enabled' : 'Disabled'} feature "${feature}" for customer "${id}".`);
      });
    });

  return operator;
}

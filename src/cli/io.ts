import { constants, createReadStream } from 'node:fs';
import { access, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Table from 'cli-table3';
import { ApiError, NetworkError, untrustedCertificate } from '../client/api.js';

/** Exit codes (STYLE.md): the only place that names them. */
export const Exit = { OK: 0, ERROR: 1, USAGE: 2, AUTH: 4 } as const;
export type ExitCode = (typeof Exit)[keyof typeof Exit];

/** An error the CLI reports as one sentence on stderr, exiting with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = Exit.ERROR,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** The global flags every command sees. */
export interface GlobalOptions {
  url?: string;
  token?: string;
  customer?: string;
  /** A CA certificate file (PEM) to trust for an HTTPS deployment. */
  caCert?: string;
  json?: boolean;
  debug?: boolean;
}

/** Where and how a command writes: the one place that knows TTYs, --json, colour. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal: tables, colour, local times, progress. */
  tty: boolean;
  /** stdin and stdout are terminals: prompts are allowed. */
  interactive: boolean;
  color: boolean;
  json: boolean;
  debug: boolean;
  /** Columns of the terminal tables must fit (stdout's width, else COLUMNS, else 80). */
  width?: number;
}

export function createIo(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Io {
  const tty = Boolean(process.stdout.isTTY);
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : text + '\n'),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : text + '\n'),
    tty,
    interactive: tty && Boolean(process.stdin.isTTY),
    color: tty && !env.NO_COLOR && env.TERM !== 'dumb',
    json: Boolean(options.json),
    debug: Boolean(options.debug),
    width: process.stdout.columns || Number(env.COLUMNS) || 80,
  };
}

export interface Column<T> {
  header: string;
  value: (item: T) => string | number | boolean | undefined | null;
}

/** A list: `--json` prints the items as a JSON array; a TTY gets a table; a pipe gets tab-separated rows. */
export function printList<T>(io: Io, items: T[], columns: Column<T>[]): void {
  if (io.json) return io.out(JSON.stringify(items, null, 2));
  const rows = items.map((item) => rowCells(item, columns));
  if (!io.tty) {
    if (rows.length) io.out(rows.map((r) => r.join('\t')).join('\n'));
    return;
  }
  if (rows.length === 0) return io.err('No results.');
  const head = columns.map((c) => c.header);
  const natural = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const table = new Table({
    head,
    // compact: one line per row, a rule under the header only (a list of events stays readable).
    style: { head: io.color ? ['cyan'] : [], border: io.color ? ['grey'] : [], compact: true },
    // Cells cli-table3 cuts short end in "…": the table stays one line per row at any width.
    colWidths: fitColumns(natural, io.width ?? 80).map((w) => w + 2),
  });
  table.push(...rows);
  io.out(table.toString());
}

/** The narrowest a column becomes to fit a table into the terminal: room for a few characters and "…". */
const MIN_COLUMN = 6;

/**
 * Column widths (without padding) that fit `width` terminal columns: the widest columns give way
 * first, down to MIN_COLUMN each; a terminal too narrow for even that gets the narrowest table.
 */
export function fitColumns(natural: number[], width: number): number[] {
  const widths = [...natural];
  // Each column has a space either side and a border on its left, the table one on its right.
  const total = () => widths.reduce((sum, w) => sum + w + 3, 1);
  while (total() > width) {
    const widest = Math.max(...widths);
    if (widest <= MIN_COLUMN) break;
    // The widest columns shrink together, no further than the next widest: the cut is shared.
    const next = Math.max(MIN_COLUMN, ...widths.filter((w) => w < widest));
    const at = widths.filter((w) => w === widest).length;
    const to = Math.max(next, widest - Math.ceil((total() - width) / at));
    for (let i = 0; i < widths.length; i++) if (widths[i] === widest) widths[i] = to;
  }
  return widths;
}

/** One object: `--json` prints the API's object; otherwise `field<TAB>value` lines (aligned on a TTY). */
export function printObject<T>(io: Io, object: T, fields: Column<T>[]): void {
  if (io.json) return io.out(JSON.stringify(object, null, 2));
  const width = Math.max(...fields.map((f) => f.header.length));
  io.out(
    fields
      .map((f) => (io.tty ? `${f.header.padEnd(width)}  ${cell(f.value(object))}` : `${f.header}\t${cell(f.value(object))}`))
      .join('\n'),
  );
}

/** The cells of one row: empty for a missing value, on one line. */
export function rowCells<T>(item: T, columns: Column<T>[]): string[] {
  return columns.map((c) => cell(c.value(item)));
}

function cell(value: string | number | boolean | undefined | null): string {
  if (value === undefined || value === null) return '';
  // Tabs and newlines inside a value would break the tab-separated form.
  return String(value).replace(/[\t\n\r]/g, ' ');
}

/** A time in local time on a TTY, ISO 8601 UTC otherwise. */
export function formatTime(io: Io, millis: number | undefined | null): string {
  if (millis === undefined || millis === null) return '';
  const date = new Date(millis);
  if (!io.tty) return date.toISOString();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** Whether stderr is a terminal: progress is for a person watching, not for logs or pipes. */
export function stderrIsTerminal(): boolean {
  return Boolean(process.stderr.isTTY);
}

/** A one-line progress display on stderr. */
export interface ProgressLine {
  show(text: string): void;
  clear(): void;
}

/** A progress line rewritten in place when stderr is a terminal; silent otherwise. */
export function progressLine(): ProgressLine {
  const enabled = stderrIsTerminal();
  let shown = false;
  return {
    show(text: string) {
      if (!enabled) return;
      process.stderr.write(`\r\u001b[2K${text}`);
      shown = true;
    },
    clear() {
      if (shown) process.stderr.write('\r\u001b[2K');
      shown = false;
    },
  };
}

/** A value as a POSIX shell word, for commands that messages suggest: quoted only when it needs to be. */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A status line on stderr ("Created gateway x."), in green on a colour terminal. */
export function success(io: Io, message: string): void {
  io.err(io.color ? `\u001b[32m✓\u001b[0m ${message}` : message);
}

/** Reads all of stdin (for `--password-stdin` and friends), without the trailing newline. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/** Refuses to prompt when not interactive, naming the flag that would have answered. */
export function requireInteractive(io: Io, flag: string): void {
  if (!io.interactive) throw new CliError(`${flag} required when not running interactively`, Exit.USAGE);
}

/** A hidden prompt for a secret; only on a TTY. */
export async function promptSecret(io: Io, message: string, flag: string): Promise<string> {
  requireInteractive(io, flag);
  const { password } = await import('@inquirer/prompts');
  return password({ message, mask: '*' });
}

/**
 * A new secret typed at a prompt: checked here against `minLength` and asked twice (DESIGN "CLI
 * conventions"), asking again on a short or mismatched answer, three times at most.
 */
export async function promptNewSecret(io: Io, what: string, minLength: number, flag: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const first = await promptSecret(io, `New ${what} (at least ${minLength} characters):`, flag);
    let problem: string;
    if ([...first].length < minLength) problem = `the ${what} has ${[...first].length} characters; it needs at least ${minLength}`;
    else if ((await promptSecret(io, `The new ${what} again:`, flag)) === first) return first;
    else problem = `the two ${what}s differ`;
    if (attempt === 3) throw new CliError(problem, Exit.USAGE);
    io.err(`${problem[0]!.toUpperCase()}${problem.slice(1)}; try again.`);
  }
}

export async function promptText(io: Io, message: string, flag: string): Promise<string> {
  requireInteractive(io, flag);
  const { input } = await import('@inquirer/prompts');
  return input({ message });
}

/** Asks yes/no on a TTY (refused otherwise, naming `flag`); true only for yes. */
export async function promptYesNo(io: Io, message: string, flag: string): Promise<boolean> {
  requireInteractive(io, flag);
  const { confirm } = await import('@inquirer/prompts');
  return confirm({ message, default: false });
}

/** Asks yes/no on a TTY; `yes` (from `--yes`) answers without asking. */
export async function confirmAction(io: Io, message: string, yes: boolean | undefined): Promise<void> {
  if (yes) return;
  if (!(await promptYesNo(io, message, '--yes'))) throw new CliError('cancelled', Exit.USAGE);
}

/**
 * Whether a 403's details say the caller lacks a permission or access (the server's sentences in
 * src/server/access.ts and user-admin.ts): exit 4 is for those only (DESIGN "CLI conventions").
 */
function deniesAccess(details: string): boolean {
  return /\bpermission\b|has no access to customer|An API key cannot|Only an administrator|served only to this machine/.test(details);
}

/** Turns any error into one sentence with a next step, and the exit code for it. */
export function describeError(error: unknown): { message: string; exitCode: ExitCode } {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  const untrusted = untrustedCertificate(error);
  if (error instanceof NetworkError && untrusted) {
    return {
      message: `the certificate of ${error.baseUrl} is not trusted (${untrusted}): pass --ca-cert with the deployment's CA (\`scanhub operator ca\` prints it) or set SCANHUB_CA_CERT`,
      exitCode: Exit.ERROR,
    };
  }
  if (error instanceof NetworkError) {
    return { message: `${error.message}: is the URL right and is \`scanhub serve\` running there?`, exitCode: Exit.ERROR };
  }
  if (error instanceof ApiError) {
    const details = error.details.replace(/\.$/, '');
    if (error.status === 401) {
      // A refused API key says itself what to do (create a new one); logging in would not help CI.
      const next = details.includes('API key') ? '' : '; run `scanhub login`';
      return { message: `not authenticated: ${details}${next}`, exitCode: Exit.AUTH };
    }
    if (error.status === 403 && deniesAccess(details)) return { message: `not allowed: ${details}`, exitCode: Exit.AUTH };
    // Other 403s refuse a state (a gateway prepared already, a spent token): an error, not a question of rights.
    if (error.status === 403) return { message: `refused: ${details}`, exitCode: Exit.ERROR };
    return { message: `${error.title.toLowerCase()}: ${details}`, exitCode: Exit.ERROR };
  }
  if (error instanceof Error && error.name === 'ExitPromptError') return { message: 'cancelled', exitCode: Exit.USAGE };
  return { message: error instanceof Error ? error.message : String(error), exitCode: Exit.ERROR };
}

/**
 * Refuses an output file that exists (unless `force`, the commands' `--force`) or whose folder
 * cannot take it. Downloads call it before the work it would waste: no export is run, and no
 * EULA agreed to, for a file that could not be written or that would replace another.
 */
export async function checkOutputFile(file: string, force: boolean): Promise<void> {
  if (!force && (await stat(file).catch(() => undefined))) {
    throw new CliError(`${file} exists: pass --force to overwrite it or -o for another file`, Exit.USAGE);
  }
  const folder = dirname(file);
  const kind = await stat(folder).catch(() => undefined);
  if (!kind?.isDirectory()) throw new CliError(`cannot write ${file}: ${folder} is not a folder`, Exit.USAGE);
  await access(folder, constants.W_OK).catch(() => {
    throw new CliError(`cannot write ${file}: ${folder} is not writable`, Exit.USAGE);
  });
}

/** The value of an output-file option that means stdout (DESIGN "CLI conventions"). */
export const STDOUT = '-';

/**
 * Runs `write` with the file an output option names, checked first (see checkOutputFile). For `-`
 * it writes a temporary file that is then copied to stdout and removed: the writers verify and
 * rename as they go, which a pipe cannot do. `name` is how messages name the target.
 */
export async function writeOutput<T>(output: string, force: boolean, write: (file: string, name: string) => Promise<T>): Promise<T> {
  if (output !== STDOUT) {
    await checkOutputFile(output, force);
    return write(output, output);
  }
  const folder = await mkdtemp(join(tmpdir(), 'scanhub-out-'));
  try {
    const file = join(folder, 'output');
    const result = await write(file, 'stdout');
    await pipeline(createReadStream(file), process.stdout, { end: false });
    return result;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

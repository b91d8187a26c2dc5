import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { GatewayDraft } from '../../client/gateways.js';
import { CliError, Exit } from '../io.js';

const COLUMNS = ['name', 'usecase', 'station'] as const;

/** Splits RFC 4180 CSV into rows of fields (quoted fields may hold commas, quotes and line breaks). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(field);
    rows.push(row);
    row = [];
    field = '';
  };
  for (; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else {
      field += c;
    }
  }
  if (quoted) throw new Error('a quoted field is not closed');
  if (field !== '' || row.length) endRow();
  return rows.filter((r) => !(r.length === 1 && r[0] === ''));
}

function fromCsv(text: string, file: string): GatewayDraft[] {
  let rows: string[][];
  try {
    rows = parseCsv(text);
  } catch (cause) {
    throw new CliError(`${file} is not valid CSV: ${(cause as Error).message}`, Exit.USAGE, { cause });
  }
  const header = (rows.shift() ?? []).map((h) => h.trim().toLowerCase());
  const missing = COLUMNS.filter((c) => !header.includes(c));
  const unknown = header.filter((h) => !(COLUMNS as readonly string[]).includes(h));
  if (missing.length || unknown.length) {
    throw new CliError(`${file}: the header row must name the columns name,usecase,station (got ${header.join(',') || 'nothing'})`, Exit.USAGE);
  }
  return rows.map((row, index) => {
    if (row.length !== header.length) {
      throw new CliError(`${file} line ${index + 2}: ${row.length} fields, expected ${header.length}`, Exit.USAGE);
    }
    const value = (column: string) => row[header.indexOf(column)]!;
    return { name: value('name'), usecase: value('usecase'), station: value('station') };
  });
}

function fromJson(text: string, file: string): GatewayDraft[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new CliError(`${file} is not valid JSON: ${(cause as Error).message}`, Exit.USAGE, { cause });
  }
  // Either the bulk-create body itself or just its array.
  const list = Array.isArray(parsed) ? parsed : (parsed as { gateways?: unknown } | null)?.gateways;
  if (!Array.isArray(list)) throw new CliError(`${file}: expected an array of gateways or { "gateways": [...] }`, Exit.USAGE);
  return list as GatewayDraft[];
}

/** The gateways of a `.csv` (header row name,usecase,station) or `.json` file. */
export function readGatewayFile(file: string): GatewayDraft[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new CliError(`cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`, Exit.USAGE, { cause });
  }
  const extension = extname(file).toLowerCase();
  const json = extension === '.json' || (extension !== '.csv' && /^\s*[[{]/.test(text));
  const drafts = json ? fromJson(text, file) : fromCsv(text, file);
  if (drafts.length === 0) throw new CliError(`${file} lists no gateways`, Exit.USAGE);
  return drafts;
}

// Imports end in .js so that the tests' Node resolution reads this file too (test/console/command-input.test.ts).
import type { Command } from '../../../../src/client/commands.js';
import { DEFAULT_TTL_SECONDS, FEEDBACK_SEQUENCES, type CommandInput } from '../../../../src/domain/commands.js';

/** The commands the console's form sends (docs/commands.md "The API": the well-known names it checks). */
export const FORM_COMMANDS = ['feedback', 'display'] as const;
export type FormCommand = (typeof FORM_COMMANDS)[number];

export type Sequence = (typeof FEEDBACK_SEQUENCES)[number];
export { FEEDBACK_SEQUENCES };

/** What the form holds, as typed. */
export interface CommandFormValues {
  name: FormCommand;
  sequence: Sequence;
  template: string;
  /** `key=value` lines. */
  fields: string;
  /** The scanner it is for; empty: the gateway itself. */
  deviceId: string;
  ttlSeconds: number;
}

export const INITIAL_VALUES: Omit<CommandFormValues, 'deviceId'> = { name: 'feedback', sequence: 'OK', template: '', fields: '', ttlSeconds: DEFAULT_TTL_SECONDS };

/** The lifetimes offered: a command not delivered by then expires (the API's default, 1 hour, first chosen). */
export const TTL_CHOICES: readonly { seconds: number; label: string }[] = [
  { seconds: 30, label: '30 seconds' },
  { seconds: 60, label: '1 minute' },
  { seconds: 600, label: '10 minutes' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '1 day' },
  { seconds: 604_800, label: '7 days' },
];

/**
 * `key=value` lines as an object of strings, as the CLI's `--param key=value` (blank lines
 * skipped, spaces around the key trimmed); throws an Error naming the line that is not.
 */
export function parseFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (!line) return;
    const at = line.indexOf('=');
    const key = at < 0 ? '' : line.slice(0, at).trim();
    if (!key) throw new Error(`Line ${index + 1} of Fields, "${line}", is not key=value: write one field a line, such as qty=3.`);
    if (Object.hasOwn(fields, key)) throw new Error(`Fields names "${key}" twice (line ${index + 1}): keep one.`);
    fields[key] = line.slice(at + 1).trim();
  });
  return fields;
}

/** The request body for the form's values (the API checks the rest and names what is wrong). */
export function commandInput(values: CommandFormValues): CommandInput {
  const parameters = values.name === 'feedback' ? { sequence: values.sequence } : { template: values.template, fields: parseFields(values.fields) };
  const deviceId = values.deviceId.trim();
  return { name: values.name, parameters, ttl_seconds: values.ttlSeconds, ...(deviceId ? { device_id: deviceId } : {}) };
}

/** A command's parameters in a few words: `OK` for feedback, `pick: qty=3` for display, JSON for the rest. */
export function describeParameters(name: string, parameters: Record<string, unknown>): string {
  if (name === 'feedback' && typeof parameters.sequence === 'string') return parameters.sequence;
  if (name === 'display' && typeof parameters.template === 'string') {
    const fields = parameters.fields && typeof parameters.fields === 'object' ? Object.entries(parameters.fields) : [];
    const text = fields.map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(', ');
    return text ? `${parameters.template}: ${text}` : parameters.template;
  }
  const json = JSON.stringify(parameters);
  return json === '{}' ? '' : json;
}

/** A command in a few words: `feedback (OK)`. */
export function commandSummary(command: Pick<Command, 'name' | 'parameters'>): string {
  const parameters = describeParameters(command.name, command.parameters);
  return parameters ? `${command.name} (${parameters})` : command.name;
}

/** What was just sent, in a sentence: `Sent feedback (OK) to ring-7.` */
export function sentSentence(command: Command, to: string): string {
  return `Sent ${commandSummary(command)} to ${command.device_id ?? to}.`;
}

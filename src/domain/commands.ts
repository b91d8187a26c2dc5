import type { AuditEntry } from './audit.js';

/**
 * Commands to gateways and scanners (docs/commands.md): what a command may say, the states it goes
 * through, the JSON a gateway receives and the JSON it answers with. Pure: the store keeps the
 * record, the broker delivers it, the API shows it through toApiCommand.
 */

export const COMMAND_STATUSES = ['QUEUED', 'DELIVERED', 'SUCCEEDED', 'FAILED', 'EXPIRED', 'CANCELED'] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];

/** The outcomes a gateway reports on `command-responses`. */
export const RESPONSE_STATUSES = ['SUCCEEDED', 'FAILED'] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

export const COMMAND_NAME = /^[a-z][a-z0-9_.-]{0,63}$/;
/** `parameters` as JSON text is at most this many bytes. */
export const MAX_PARAMETERS_BYTES = 16 * 1024;
export const MAX_TTL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_TTL_SECONDS = 3600;
/** Gateways per `POST /{customer_id}/commands`. */
export const MAX_BULK_COMMANDS = 1000;
/** A device_id the command names is at most this long (as the events' own limit). */
export const MAX_DEVICE_ID_LENGTH = 200;
/** `details` a gateway reports is kept up to this many characters. */
export const MAX_DETAILS_LENGTH = 1000;

export const FEEDBACK_SEQUENCES = ['OK', 'NOK', 'WARNING'] as const;

/** A command as stored. `parameters` is its JSON text; `seq` orders a gateway's queue (creation order). */
export interface CommandRecord {
  id: string;
  customer_id: string;
  gateway_id: string;
  device_id: string | null;
  name: string;
  parameters: string;
  status: CommandStatus;
  created: number;
  last_updated: number;
  expires_at: number;
  delivered_at: number | null;
  completed_at: number | null;
  details: string | null;
  /** How often it was written to a gateway: from the second time on it goes with DUP set. */
  attempts: number;
  seq: number;
}

/** A command as the API shows it; `delivered_at`, `completed_at` and `details` only once known. */
export interface ApiCommand {
  command_id: string;
  gateway_id: string;
  device_id: string | null;
  name: string;
  parameters: Record<string, unknown>;
  status: CommandStatus;
  created: number;
  last_updated: number;
  expires_at: number;
  delivered_at?: number;
  completed_at?: number;
  details?: string;
}

/** What a caller asks for (one gateway; the bulk call names several). */
export interface CommandInput {
  name: string;
  device_id?: string;
  parameters?: Record<string, unknown>;
  ttl_seconds?: number;
}

/** A command no gateway will act on any more. */
export function isFinal(status: CommandStatus): boolean {
  return status !== 'QUEUED' && status !== 'DELIVERED';
}

/** The status at `now`: a QUEUED or DELIVERED command past its `expires_at` reads as EXPIRED, stored or not. */
export function statusAt(record: Pick<CommandRecord, 'status' | 'expires_at'>, now: number): CommandStatus {
  return !isFinal(record.status) && record.expires_at <= now ? 'EXPIRED' : record.status;
}

/** Why the well-known command's parameters are wrong, or undefined; other names take any object. */
function wellKnownProblem(name: string, parameters: Record<string, unknown>, field: string): string | undefined {
  if (name === 'feedback') {
    const sequence = parameters.sequence;
    if (typeof sequence !== 'string' || !(FEEDBACK_SEQUENCES as readonly string[]).includes(sequence)) {
      return `Field "${field}.sequence" of a feedback command must be one of ${FEEDBACK_SEQUENCES.join(', ')}.`;
    }
  } else if (name === 'display') {
    if (typeof parameters.template !== 'string') return `Field "${field}.template" of a display command must be a string.`;
    const fields = parameters.fields;
    if (fields !== undefined && (typeof fields !== 'object' || fields === null || Array.isArray(fields))) {
      return `Field "${field}.fields" of a display command must be an object.`;
    }
  } else if (name === 'configure') {
    if ('job_config_id' in parameters && typeof parameters.job_config_id !== 'string') {
      return `Field "${field}.job_config_id" of a configure command must be a job configuration id (a string).`;
    }
  }
  return undefined;
}

/** Why the input cannot be a command (a sentence naming the field, `prefix` before each name), or undefined. */
export function commandInputProblem(input: CommandInput, prefix = ''): string | undefined {
  if (!COMMAND_NAME.test(input.name)) {
    return `Field "${prefix}name" must match ${COMMAND_NAME.source}: a lower-case letter, then up to 63 of a-z, 0-9, "_", "." and "-".`;
  }
  if (input.device_id !== undefined && (input.device_id.length === 0 || input.device_id.length > MAX_DEVICE_ID_LENGTH || input.device_id.includes('\u0000'))) {
    return `Field "${prefix}device_id" must be 1 to ${MAX_DEVICE_ID_LENGTH} characters without NUL.`;
  }
  const parameters = input.parameters ?? {};
  if (Buffer.byteLength(JSON.stringify(parameters)) > MAX_PARAMETERS_BYTES) {
    return `Field "${prefix}parameters" must be at most ${MAX_PARAMETERS_BYTES} bytes as JSON.`;
  }
  if (input.ttl_seconds !== undefined && (!Number.isInteger(input.ttl_seconds) || input.ttl_seconds < 1 || input.ttl_seconds > MAX_TTL_SECONDS)) {
    return `Field "${prefix}ttl_seconds" must be an integer from 1 to ${MAX_TTL_SECONDS} (7 days).`;
  }
  return wellKnownProblem(input.name, parameters, `${prefix}parameters`);
}

/** When a command created at `now` with this input expires. */
export function expiryOf(input: CommandInput, now: number): number {
  return now + (input.ttl_seconds ?? DEFAULT_TTL_SECONDS) * 1000;
}

/** The API form at `now`, its fields in a fixed order (both stores' answers are the same bytes). */
export function toApiCommand(record: CommandRecord, now: number): ApiCommand {
  return {
    command_id: record.id,
    gateway_id: record.gateway_id,
    device_id: record.device_id,
    name: record.name,
    parameters: JSON.parse(record.parameters) as Record<string, unknown>,
    status: statusAt(record, now),
    created: record.created,
    last_updated: record.last_updated,
    expires_at: record.expires_at,
    ...(record.delivered_at !== null ? { delivered_at: record.delivered_at } : {}),
    ...(record.completed_at !== null ? { completed_at: record.completed_at } : {}),
    ...(record.details !== null ? { details: record.details } : {}),
  };
}

/** The JSON a gateway receives on its command topic (docs/commands.md "On the wire"). */
export function commandMessage(record: CommandRecord): Buffer {
  return Buffer.from(
    JSON.stringify({
      command_id: record.id,
      name: record.name,
      ...(record.device_id !== null ? { device_id: record.device_id } : {}),
      parameters: JSON.parse(record.parameters) as unknown,
      created: record.created,
      expires_at: record.expires_at,
    }),
  );
}

/** A gateway's report of a command's outcome. */
export interface CommandResponse {
  command_id: string;
  status: ResponseStatus;
  details?: string;
}

/** Reads a response payload, or says why it is not one (for the log of a dropped response). */
export function parseCommandResponse(payload: Buffer): CommandResponse | { invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString('utf8'));
  } catch {
    return { invalid: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { invalid: 'not a JSON object' };
  const { command_id, status, details } = value as Record<string, unknown>;
  if (typeof command_id !== 'string' || command_id.length === 0 || command_id.length > 64) return { invalid: 'no command_id' };
  if (typeof status !== 'string' || !(RESPONSE_STATUSES as readonly string[]).includes(status)) return { invalid: `status is not one of ${RESPONSE_STATUSES.join(', ')}` };
  if (details !== undefined && typeof details !== 'string') return { invalid: 'details is not a string' };
  return { command_id, status: status as ResponseStatus, ...(details !== undefined ? { details: details.slice(0, MAX_DETAILS_LENGTH) } : {}) };
}

/** The actor of the changes nobody asked for: a command stored EXPIRED past its `expires_at` (docs/audit.md). */
export const COMMAND_EXPIRY_ACTOR = { type: 'operator', id: 'command-expiry' } as const;

/** The audit entry of a command stored EXPIRED (by the sweep, or by a cancel that came too late); `id` a fresh UUID. */
export function expiredAuditEntry(id: string, command: CommandRecord, now: number): AuditEntry {
  return {
    id,
    customerId: command.customer_id,
    time: now,
    action: 'command.expired',
    actor: { ...COMMAND_EXPIRY_ACTOR },
    target: { type: 'command', id: command.id },
    details: { gateway_id: command.gateway_id, name: command.name, expires_at: command.expires_at },
  };
}

/** The `data` of a `command.status` webhook message: the command as GET /{customer_id}/commands/{command_id} shows it at `now`. */
export function commandStatusMessage(command: CommandRecord, now: number): string {
  return JSON.stringify(toApiCommand(command, now));
}

/** The audit action of a change the gateway made to its command (docs/audit.md). */
export type DeviceCommandAction = 'command.delivered' | 'command.succeeded' | 'command.failed';

/** The audit entry (docs/audit.md) of a change the gateway made: the device is the actor; `id` a fresh UUID. */
export function deviceAuditEntry(id: string, command: CommandRecord, now: number): AuditEntry {
  const action: DeviceCommandAction = command.status === 'SUCCEEDED' ? 'command.succeeded' : command.status === 'FAILED' ? 'command.failed' : 'command.delivered';
  return {
    id,
    customerId: command.customer_id,
    time: now,
    action,
    actor: { type: 'device', id: command.gateway_id },
    target: { type: 'command', id: command.id },
    details: { gateway_id: command.gateway_id, name: command.name, ...(command.details !== null ? { details: command.details } : {}) },
  };
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CELL_MODES, type CellMode } from '../../domain/csv.js';
import { resolveTimeRange, type EventRangeParams } from '../../domain/event-listing.js';
import type { ExportTaskRecord } from '../../store/ports/index.js';
import { auditEntry } from '../audit.js';
import type { ServerContext } from '../context.js';
import { badRequest, insufficientStorage, internalError, notFound, tooManyRequests } from '../errors.js';
import { isNoSpaceFailure } from '../../export/write-failure.js';
import { customerParams, errorResponses } from '../schemas.js';
import { EXPORT_KEPT_MS, EXPORT_LINK_MS, TooManyExports } from '../../export/exporter.js';
import { CONCURRENCY_LIMITS, CONCURRENCY_RETRY_AFTER_SECONDS } from '../../domain/rate-limits.js';
import { signDownloadLink } from './downloads.js';
import { rangeProperties } from './events.js';

const rangeQuery = { type: 'object', properties: rangeProperties, additionalProperties: false } as const;

/** `cells` (docs/events.md "Exports"): a query parameter of the synchronous export, a body field of a task. */
const cellsProperty = {
  type: 'string',
  enum: CELL_MODES,
  description:
    'safe (default): text cells that begin with =, +, -, @, tab or CR get a leading \' so that a spreadsheet shows them as text (CSV injection). raw: every cell as stored, for programs that read the file.',
} as const;

const exportQuery = { ...rangeQuery, properties: { ...rangeProperties, cells: cellsProperty } } as const;

// Optional: a POST without a body (or with `{}`) is a safe export, as before the body existed.
const taskBody = { type: 'object', nullable: true, properties: { cells: cellsProperty }, additionalProperties: false } as const;

interface ExportQuery extends EventRangeParams {
  cells?: CellMode;
}

const taskParams = {
  type: 'object',
  properties: { customer_id: { type: 'string' }, task: { type: 'string', minLength: 1, maxLength: 100 } },
  required: ['customer_id', 'task'],
} as const;

const taskSchema = {
  type: 'object',
  properties: {
    task: { type: 'string' },
    completed: { type: 'boolean', description: 'True once processing has finished, whatever the outcome.' },
    status: { type: 'string', enum: ['PENDING', 'SUCCESSFUL', 'FAILED'] },
    download_link: { type: 'string', description: 'Only when SUCCESSFUL, for 24 hours after completion; valid 5 minutes, newly signed on every call. When that last link has expired, the task and its file are deleted (then 404).' },
  },
  required: ['task', 'completed', 'status'],
} as const;

type RangeRequest = FastifyRequest<{ Params: { customer_id: string }; Querystring: EventRangeParams }>;

/** The 429 of an export refused while the customer has as many in flight as it may, in the OpenAPI document. */
const EXPORTS_IN_FLIGHT = `The customer has ${CONCURRENCY_LIMITS.exportsInFlightPerCustomer} export tasks in flight already; Retry-After says when to try again.`;

/** Starts an export task of the request's range; 429 while the customer has as many in flight as it may. */
async function requestExport(ctx: ServerContext, request: RangeRequest, cells: CellMode | undefined): Promise<ExportTaskRecord> {
  const range = resolveTimeRange(request.query, ctx.clock());
  if ('invalid' in range) throw badRequest(range.invalid);
  const { customer_id } = request.params;
  try {
    return await ctx.exporter.request(customer_id, request.principal!.user.id, range, cells, {
      auditOf: (taskId) =>
        auditEntry(ctx, request, 'export.created', { type: 'export', id: taskId }, { start_time: range.start, end_time: range.end, cells: cells ?? 'safe' }),
      maxInFlight: CONCURRENCY_LIMITS.exportsInFlightPerCustomer,
    });
  } catch (error) {
    if (!(error instanceof TooManyExports)) throw error;
    throw tooManyRequests(
      `Customer "${customer_id}" has ${error.limit} exports in flight, as many as it may: retry once one of them has finished.`,
      CONCURRENCY_RETRY_AFTER_SECONDS,
    );
  }
}

/**
 * The signed link of a task's file, when it is SUCCESSFUL and completed less than EXPORT_KEPT_MS
 * ago: links stop then, so that every link has expired when the sweeper deletes the file.
 */
function linkOf(ctx: ServerContext, task: ExportTaskRecord): string | undefined {
  return task.status === 'SUCCESSFUL' && task.file && ctx.clock() < task.completed! + EXPORT_KEPT_MS && existsSync(join(ctx.config.blobDir, task.file))
    ? signDownloadLink(ctx, task.file, EXPORT_LINK_MS)
    : undefined;
}

/** CSV exports (docs/events.md "Exports"); the exporter lives as long as the app. */
export function registerExportRoutes(app: FastifyInstance, ctx: ServerContext): void {
  app.addHook('onReady', async () => ctx.exporter.start(app.log));
  app.addHook('onClose', async () => ctx.exporter.close());

  exportEvents(app, ctx);
  createExportTask(app, ctx);
  getExportTask(app, ctx);
}

function exportEvents(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string }; Querystring: ExportQuery }>('/:customer_id/events/export', {
    config: { access: { permission: 'event.export' } },
    schema: {
      operationId: 'exportEvents',
      summary: 'Export the events of a range as CSV and answer with a download link once the file is written',
      description: 'Answers once the file is written, with a signed link valid 5 minutes; for large ranges an export task does not hold the request open.',
      tags: ['events'],
      params: customerParams,
      querystring: exportQuery,
      response: {
        201: {
          type: 'object',
          properties: { download_link: { type: 'string', description: 'Signed link to the CSV, valid 5 minutes.' } },
          required: ['download_link'],
        },
        ...errorResponses,
      },
      refusals: {
        429: EXPORTS_IN_FLIGHT,
        507: 'The export file could not be written: the disk of the export files is full. Try again once space is freed.',
      },
    },
    handler: async (request, reply) => {
      const task = await ctx.exporter.finished(await requestExport(ctx, request, request.query.cells));
      const link = linkOf(ctx, task);
      if (!link) {
        request.log.error({ task: task.id, failure: task.failure }, 'synchronous export failed');
        // The path stays in the log: the caller learns what happened and when to try again.
        if (isNoSpaceFailure(task.failure)) throw insufficientStorage('The export file could not be written: the disk of the export files is full. Try again once space is freed.');
        throw internalError();
      }
      return reply.code(201).send({ download_link: link });
    },
  });
}

function createExportTask(app: FastifyInstance, ctx: ServerContext): void {
  app.post<{ Params: { customer_id: string }; Querystring: EventRangeParams; Body: { cells?: CellMode } | null | undefined }>('/:customer_id/events/export/tasks', {
    config: { access: { permission: 'event.export' } },
    schema: {
      operationId: 'createExportTask',
      summary: 'Start an export of the events of a range; poll the task for its download link',
      description: 'Answers at once with the task id (Location names the task); poll GET /{customer_id}/events/export/tasks/{task} until it is completed. Takes no body.',
      tags: ['events'],
      params: customerParams,
      querystring: rangeQuery,
      body: taskBody,
      response: {
        202: {
          type: 'object',
          properties: {
            task: { type: 'string' },
            requested: { type: 'string', format: 'date-time', description: 'When the task was accepted.' },
          },
          required: ['task', 'requested'],
        },
        ...errorResponses,
      },
      refusals: { 429: EXPORTS_IN_FLIGHT },
    },
    handler: async (request, reply) => {
      // The range goes in the query; one sent in the body is an unknown field (400), never silently the default day.
      const task = await requestExport(ctx, request, request.body?.cells);
      return reply
        .code(202)
        .header('location', `/${encodeURIComponent(task.customer_id)}/events/export/tasks/${task.id}`)
        .send({ task: task.id, requested: new Date(task.requested).toISOString() });
    },
  });
}

function getExportTask(app: FastifyInstance, ctx: ServerContext): void {
  app.get<{ Params: { customer_id: string; task: string } }>('/:customer_id/events/export/tasks/:task', {
    config: { access: { permission: 'event.export' } },
    schema: {
      operationId: 'getExportTask',
      summary: 'State of an export task, with a fresh download link once it is SUCCESSFUL',
      description: 'The download link comes with SUCCESSFUL while the file is kept (24 h); it is valid 5 minutes and signed anew on every call.',
      tags: ['events'],
      params: taskParams,
      response: { 200: taskSchema, ...errorResponses },
      refusals: { 404: 'No export task with this id in the customer.' },
    },
    handler: async (request) => {
      const task = await ctx.store.exportTasks.byId(request.params.customer_id, request.params.task);
      if (!task) throw notFound(`Export task "${request.params.task}" does not exist.`);
      const link = linkOf(ctx, task);
      return { task: task.id, completed: task.status !== 'PENDING', status: task.status, ...(link ? { download_link: link } : {}) };
    },
  });
}

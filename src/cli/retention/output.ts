import type { RetentionRecord } from '../../client/retention.js';
import { formatTime, type Column, type Io } from '../io.js';

/** How long events are kept, in words. */
export const kept = (days: number | null) => (days === null ? 'for ever' : `${days} day${days === 1 ? '' : 's'}`);

/** The fields of a customer's retention and its last deletion. */
export const retentionFields = (io: Io): Column<RetentionRecord>[] => [
  { header: 'EVENTS KEPT', value: (r) => kept(r.events_days) },
  { header: 'LAST DELETION', value: (r) => (r.last_deletion ? formatTime(io, r.last_deletion.finished) : 'never') },
  { header: 'DELETED', value: (r) => r.last_deletion?.deleted },
  { header: 'OLDER THAN', value: (r) => formatTime(io, r.last_deletion?.cutoff) },
  { header: 'LONGEST BATCH', value: (r) => (r.last_deletion ? `${r.last_deletion.longest_batch_ms} ms` : '') },
];

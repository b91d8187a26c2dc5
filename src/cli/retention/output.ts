import type { RetentionRecord } from '../../client/retention.js';
import { formatTime, type Column, type Io } from '../io.js';

/** How long events are kept, in words. */
export const kept = (days: number | null) => (days === null ? 'for ever' : `${days} day${days === 1 ? '' : 's'}`);

/** The fields of a customer's retention and its last deletion, lower case as every `get` prints them. */
export const retentionFields = (io: Io): Column<RetentionRecord>[] => [
  { header: 'events_kept', value: (r) => kept(r.events_days) },
  { header: 'last_deletion', value: (r) => (r.last_deletion ? formatTime(io, r.last_deletion.finished) : 'never') },
  { header: 'deleted', value: (r) => r.last_deletion?.deleted },
  { header: 'older_than', value: (r) => formatTime(io, r.last_deletion?.cutoff) },
  { header: 'longest_batch', value: (r) => (r.last_deletion ? `${r.last_deletion.longest_batch_ms} ms` : '') },
];

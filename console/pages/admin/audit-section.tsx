import { useEffect, useState } from 'preact/hooks';
import type { List } from '../../../src/client/api';
import type { AuditItem } from '../../../src/client/audit';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { api, customerPath } from '../../lib/api';
import { AuditFilters, type AuditFilter } from './audit-filters';
import { AuditTable } from './audit-table';
import { SectionHeading } from './section-heading';

/** Entries on a page: the API's keyset pages hold this many (it allows up to 500). */
export const AUDIT_PAGE_SIZE = 50;

/** The path of the first page of a filter. */
function firstPage(filter: AuditFilter): string {
  const query = new URLSearchParams({ limit: String(AUDIT_PAGE_SIZE) });
  for (const [name, value] of Object.entries(filter)) if (value !== undefined) query.set(name, String(value));
  return `${customerPath('/audit-log')}?${query}`;
}

/**
 * The audit log, newest first, a keyset page at a time (`links.next`). Only the page shown is
 * held, and the paths of the pages before it for `Previous page`: the log grows without bound.
 */
export function AuditSection() {
  const [trail, setTrail] = useState<string[]>(() => [firstPage({})]);
  const [page, setPage] = useState<List<AuditItem>>();
  const [error, setError] = useState<unknown>();
  const path = trail[trail.length - 1]!;
  // Read on each new trail, not path: `Show` with the same filters reads the newest entries again.
  useEffect(() => {
    let current = true;
    setError(undefined);
    api.get<List<AuditItem>>(path).then(
      (read) => current && setPage(read),
      (failure) => current && (setError(failure), setPage(undefined)),
    );
    return () => {
      current = false;
    };
  }, [trail]);
  const next = page?.links.next;
  return (
    <>
      <SectionHeading title="Audit log" />
      <AuditFilters onFilter={(filter) => setTrail([firstPage(filter)])} />
      <ErrorMessage error={error} />
      {page === undefined && !error ? <p class="loading">Loading the audit log…</p> : <AuditTable items={page?.items ?? []} />}
      <div class="pager" role="group" aria-label="Audit log pages">
        <Button disabled={trail.length < 2} onClick={() => setTrail(trail.slice(0, -1))}>
          Previous page
        </Button>
        <span aria-live="polite">Page {trail.length}</span>
        <Button disabled={!next} onClick={() => next && setTrail([...trail, next])}>
          Next page
        </Button>
      </div>
    </>
  );
}

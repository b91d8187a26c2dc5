import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { GatewayFilter } from '../../components/gateway-filter';
import { PageHeading } from '../../components/page-heading';
import { lastHours, rangeMillis, TimeRange, type TimeRangeValue } from '../../components/time-range';
import { useGatewayNames } from '../../lib/gateway-names';
import { can } from '../../lib/session';
import { readEventsPage, type EventsPage, type EventsQuery, type PageStart } from './event-pages';
import { EventsPager } from './events-pager';
import { EventsTable } from './events-table';
import { ExportCsv } from './export-csv';

/** What the table shows: the query, the page's start and those before it (for Previous page). */
interface Shown {
  query: EventsQuery;
  starts: PageStart[];
  page?: EventsPage;
}

/**
 * The Events page: the stored events of a time range (the last day at first) and of one gateway
 * or all, a page at a time by the API's keyset; Export CSV runs an export task of the range.
 */
export function EventsPage() {
  const names = useGatewayNames();
  const [range, setRange] = useState<TimeRangeValue>(() => lastHours(24));
  const [gatewayId, setGatewayId] = useState('');
  const [shown, setShown] = useState<Shown>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const reading = useRef<AbortController | undefined>(undefined);
  useEffect(() => () => reading.current?.abort(), []);

  /** Shows the page that starts at the last of `starts`. */
  const load = async (query: EventsQuery, starts: PageStart[]) => {
    reading.current?.abort();
    const current = new AbortController();
    reading.current = current;
    setBusy(true);
    setError(undefined);
    try {
      const page = await readEventsPage(query, starts[starts.length - 1]!, current.signal);
      if (!current.signal.aborted) setShown({ query, starts, page });
    } catch (failure) {
      if (!current.signal.aborted) setError(failure);
    } finally {
      if (reading.current === current) setBusy(false);
    }
  };
  const show = (event?: Event) => {
    event?.preventDefault();
    const millis = rangeMillis(range);
    if ('problem' in millis) return setError(new Error(millis.problem));
    void load({ ...millis, gatewayId }, [{ kind: 'first' }]);
  };
  useEffect(() => void show(), []);

  const query = shown?.query;
  const page = shown?.page;
  // The same element while the page is the same: renders for busy states skip the table.
  const table = useMemo(() => page && <EventsTable events={page.items} nameOf={names.nameOf} empty="No events in this range." />, [page, names.gateways]);
  return (
    <>
      <PageHeading title="Events" />
      <form class="events-query" onSubmit={show}>
        <TimeRange value={range} onValue={setRange} />
        <GatewayFilter gateways={names.gateways} value={gatewayId} onValue={setGatewayId} />
        <Button type="submit" kind="primary" busy={busy && shown?.starts.length === 1}>
          Show
        </Button>
      </form>
      <ErrorMessage error={error ?? names.error} />
      {can('event.export') && query && <ExportCsv query={query} />}
      {!page ? (
        !error && <p class="loading">Loading events…</p>
      ) : (
        <>
          {table}
          <EventsPager
            page={shown.starts.length}
            busy={busy}
            onPrevious={shown.starts.length > 1 ? () => void load(shown.query, shown.starts.slice(0, -1)) : undefined}
            onNext={page.next ? () => void load(shown.query, [...shown.starts, page.next!]) : undefined}
          />
        </>
      )}
    </>
  );
}

import { useEffect, useRef, useState } from 'preact/hooks';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { GatewayFilter } from '../../components/gateway-filter';
import { PageHeading } from '../../components/page-heading';
import { Sparkline } from '../../components/sparkline';
import { useGatewayNames } from '../../lib/gateway-names';
import { LiveFeed, LIVE_ROWS, RATE_SECONDS, type FeedView } from './live-feed';
import { LiveTable } from './live-table';

const STATES = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', stopped: 'Stopped' } as const;

/** The count and the rate in words, beside the sparkline. */
function rateText(view: FeedView | undefined, filtered: boolean): string {
  const rate = view?.rate ?? [];
  const last = rate[rate.length - 1] ?? 0;
  const peak = Math.max(0, ...rate);
  const total = `${(view?.total ?? 0).toLocaleString()} scan${view?.total === 1 ? '' : 's'} since ${filtered ? 'the gateway was chosen' : 'the page opened'}`;
  return `${total}; ${last.toLocaleString()} a second now, at most ${peak.toLocaleString()} in the last ${RATE_SECONDS / 60} minutes`;
}

/**
 * The Live page: the customer's scans as they are stored, newest first, the last LIVE_ROWS of
 * them; Pause freezes the table while the stream goes on; a gateway filter; the rate sparkline.
 */
export function LivePage() {
  const names = useGatewayNames();
  const [gatewayId, setGatewayId] = useState('');
  const [paused, setPaused] = useState(false);
  const [view, setView] = useState<FeedView>();
  const feed = useRef<LiveFeed | undefined>(undefined);
  useEffect(() => {
    const made = new LiveFeed(setView);
    feed.current = made;
    return () => made.stop();
  }, []);
  const togglePause = () => {
    feed.current?.setPaused(!paused);
    setPaused(!paused);
  };
  const filter = (id: string) => {
    setGatewayId(id);
    feed.current?.setGateway(id);
  };
  return (
    <>
      <PageHeading title="Live">
        <Button kind={paused ? 'primary' : 'secondary'} onClick={togglePause}>
          {paused ? 'Resume' : 'Pause'}
        </Button>
      </PageHeading>
      <div class="live-bar">
        <GatewayFilter gateways={names.gateways} value={gatewayId} onValue={filter} />
        <div class="live-rate">
          <p class="live-state" role="status">
            <span class={`live-dot ${paused ? 'paused' : (view?.state ?? 'connecting')}`} aria-hidden="true" />
            {paused ? 'Paused' : STATES[view?.state ?? 'connecting']}
          </p>
          <Sparkline values={view?.rate ?? []} label={`Scans a second over the last ${RATE_SECONDS / 60} minutes`} />
          <p class="hint">{rateText(view, gatewayId !== '')}</p>
        </div>
      </div>
      <ErrorMessage error={names.error ?? view?.error} />
      {paused && view && view.missed > 0 && (
        <p class="notice">
          {view.missed.toLocaleString()} new scan{view.missed === 1 ? '' : 's'} since the pause: Resume shows the newest.
        </p>
      )}
      <LiveTable
        rows={view?.rows ?? []}
        nameOf={names.nameOf}
        empty={gatewayId ? 'No scan of this gateway since the page opened.' : 'No scan since the page opened: they appear here as gateways send them.'}
      />
      <p class="hint after-table">The newest {LIVE_ROWS} scans are kept; the Events page lists every stored one.</p>
    </>
  );
}

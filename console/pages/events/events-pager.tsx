import { Button } from '../../components/button';

interface Props {
  /** One-based page number within the query. */
  page: number;
  busy: boolean;
  /** Absent on the first page. */
  onPrevious?: () => void;
  /** Absent on the last page. */
  onNext?: () => void;
}

/**
 * Previous and next over the API's keyset pages: a page knows only whether another follows, not
 * how many there are (a count of millions of events would cost more than the page).
 */
export function EventsPager({ page, busy, onPrevious, onNext }: Props) {
  return (
    <div class="pager" role="group" aria-label="Events pages">
      <Button disabled={!onPrevious || busy} onClick={onPrevious}>
        Previous page
      </Button>
      <span aria-live="polite">Page {page.toLocaleString()}</span>
      <Button disabled={!onNext || busy} onClick={onNext}>
        Next page
      </Button>
    </div>
  );
}

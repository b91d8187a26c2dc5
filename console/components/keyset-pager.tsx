import { Button } from './button';

interface Props {
  /** Zero-based page shown. */
  page: number;
  pageSize: number;
  /** Rows on the page shown. */
  rows: number;
  hasNext: boolean;
  /** What the rows are, for "Scanners 51–100". */
  noun: string;
  onPrevious: () => void;
  onNext: () => void;
}

/** Previous/next over a list the API pages by keyset: where the page is, without a total the API does not count. */
export function KeysetPager({ page, pageSize, rows, hasNext, noun, onPrevious, onNext }: Props) {
  const first = page * pageSize + 1;
  return (
    <div class="pager" role="group" aria-label={`${noun} pages`}>
      <Button disabled={page === 0} onClick={onPrevious}>
        Previous page
      </Button>
      <span aria-live="polite">{rows === 0 ? `${noun}: none` : `${noun} ${first.toLocaleString()}–${(first + rows - 1).toLocaleString()}`}</span>
      <Button disabled={!hasNext} onClick={onNext}>
        Next page
      </Button>
    </div>
  );
}

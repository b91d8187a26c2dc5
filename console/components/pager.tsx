import { Button } from './button';

interface Props {
  /** Zero-based page shown. */
  page: number;
  pageSize: number;
  total: number;
  /** What the rows are, for "Gateways 1-50 of 2,000". */
  noun: string;
  onPage: (page: number) => void;
}

/** Previous/next over a list held in memory, and where in it the page is. */
export function Pager({ page, pageSize, total, noun, onPage }: Props) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const first = total === 0 ? 0 : page * pageSize + 1;
  const last = Math.min(total, (page + 1) * pageSize);
  return (
    <div class="pager" role="group" aria-label={`${noun} pages`}>
      <Button disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous page
      </Button>
      <span aria-live="polite">
        {noun} {first.toLocaleString()}–{last.toLocaleString()} of {total.toLocaleString()}
      </span>
      <Button disabled={page >= pages - 1} onClick={() => onPage(page + 1)}>
        Next page
      </Button>
    </div>
  );
}

import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * The page's `<h1>`, with its actions beside it. It takes the focus when the page opens, so that
 * keyboard and screen-reader users start at the new page rather than at the link they followed.
 */
export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · scanhub`;
    if (document.activeElement === document.body || document.activeElement?.closest('nav')) heading.current?.focus();
  }, [title]);
  return (
    <div class="page-heading">
      <h1 ref={heading} tabIndex={-1}>
        {title}
      </h1>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}

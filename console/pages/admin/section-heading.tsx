import type { ComponentChildren } from 'preact';

/** A section's `<h2>` with its buttons beside it (`New user`), below the page's `Admin` heading. */
export function SectionHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="section-heading">
      <h2>{title}</h2>
      {children && <div class="page-actions">{children}</div>}
    </div>
  );
}

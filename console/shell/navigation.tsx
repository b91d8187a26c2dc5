import { PAGES, sectionOf } from '../pages';
import { can } from '../lib/session';

/** The navigation landmark: a link per page the user may see, the current one marked. */
export function Navigation({ path }: { path: string }) {
  const current = sectionOf(path);
  return (
    <nav class="navigation" aria-label="Console">
      <ul>
        {PAGES.filter((page) => can(page.permission)).map((page) => (
          <li key={page.path}>
            <a href={`#${page.path}`} aria-current={page === current ? 'page' : undefined}>
              {page.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

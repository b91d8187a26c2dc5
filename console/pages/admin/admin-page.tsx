import { useEffect } from 'preact/hooks';
import { PageHeading } from '../../components/page-heading';
import { Redirect } from '../../components/redirect';
import { useRoute } from '../../lib/router';
import { can } from '../../lib/session';
import { ADMIN_SECTIONS, type AdminSection } from './admin-sections';

/** The Admin page's own navigation: a link per section the user may see, the current one marked. */
function AdminNavigation({ sections, current }: { sections: AdminSection[]; current: AdminSection | undefined }) {
  return (
    <nav class="sub-navigation" aria-label="Admin">
      <ul>
        {sections.map((section) => (
          <li key={section.path}>
            <a href={`#${section.path}`} aria-current={section === current ? 'page' : undefined}>
              {section.title}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * Administration, for those who may manage users (console/pages.ts): users and their
 * invitations, roles, API keys, the audit log and retention, each section at its own route
 * (`#/admin/users`) and offered only with its permission (the API refuses the rest anyway).
 */
export function AdminPage() {
  const route = useRoute();
  const sections = ADMIN_SECTIONS.filter((section) => can(section.permission));
  const current = sections.find((section) => section.path === route.path);
  const known = ADMIN_SECTIONS.find((section) => section.path === route.path);
  useEffect(() => {
    if (current) document.title = `${current.title} · Admin · scanhub`;
  }, [current]);
  if (route.path === '/admin' && sections[0]) return <Redirect to={`#${sections[0].path}`} />;
  const Section = current?.component;
  return (
    <>
      <PageHeading title="Admin" />
      <AdminNavigation sections={sections} current={current} />
      {Section ? (
        <section class="admin-section" key={current.path}>
          <Section />
        </section>
      ) : known ? (
        <p>Your role does not allow this section (it needs the permission {known.permission}); ask an administrator.</p>
      ) : (
        <p>
          The Admin page has no section at <code>{route.hash}</code>.
        </p>
      )}
    </>
  );
}

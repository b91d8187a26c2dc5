import { PageHeading } from '../../components/page-heading';

/** The Admin page: its heading; the page's helper fills it (docs/console.md "Adding a page"). */
export function AdminPage() {
  return <PageHeading title="Admin" />;
}

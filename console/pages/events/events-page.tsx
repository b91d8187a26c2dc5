import { PageHeading } from '../../components/page-heading';

/** The Events page: its heading; the page's helper fills it (docs/console.md "Adding a page"). */
export function EventsPage() {
  return <PageHeading title="Events" />;
}

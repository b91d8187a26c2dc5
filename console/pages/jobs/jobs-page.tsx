import { PageHeading } from '../../components/page-heading';

/** The Jobs page: its heading; the page's helper fills it (docs/console.md "Adding a page"). */
export function JobsPage() {
  return <PageHeading title="Jobs" />;
}

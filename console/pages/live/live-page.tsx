import { PageHeading } from '../../components/page-heading';

/** The Live page: its heading; the page's helper fills it (docs/console.md "Adding a page"). */
export function LivePage() {
  return <PageHeading title="Live" />;
}

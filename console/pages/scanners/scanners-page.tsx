import { PageHeading } from '../../components/page-heading';

/** The Scanners page: its heading; the page's helper fills it (docs/console.md "Adding a page"). */
export function ScannersPage() {
  return <PageHeading title="Scanners" />;
}

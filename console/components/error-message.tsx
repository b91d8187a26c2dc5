import { detailsOf } from '../lib/api';

/** A failed call as the API explained it: its `details` sentence, announced to screen readers. */
export function ErrorMessage({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  return (
    <p class="error-message" role="alert">
      {detailsOf(error)}
    </p>
  );
}

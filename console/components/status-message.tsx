/** What an action did (`Created gateway "Dock 1".`), read out by screen readers without moving focus. */
export function StatusMessage({ text }: { text: string | undefined }) {
  return (
    <p class="status-message" role="status">
      {text ?? ''}
    </p>
  );
}

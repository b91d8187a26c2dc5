import { useState } from 'preact/hooks';

export interface Submission {
  /** True while the action runs: the submit button shows it and takes no second click. */
  busy: boolean;
  /** Why the last run failed (the API's ApiError, or an Error whose message is the sentence to show). */
  error: unknown;
  /** The form's onSubmit: runs the action, keeping its failure to show. */
  submit: (event: Event) => Promise<void>;
}

/** A form that runs one action on submit, such as a dialog that creates something. */
export function useSubmit(action: () => Promise<void>): Submission {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}

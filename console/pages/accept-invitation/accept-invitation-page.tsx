import { useState } from 'preact/hooks';
import type { LoginResponse } from '../../../src/client/auth';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { PageHeading } from '../../components/page-heading';
import { api } from '../../lib/api';
import { navigate } from '../../lib/router';
import { beginSession } from '../../lib/sign-in';

/** The shortest password the API accepts (DESIGN.md "Authentication and access"). */
export const MIN_PASSWORD_LENGTH = 12;

/** What is wrong with the new password before it is sent (checked locally, asked twice), if anything. */
export function passwordProblem(password: string, again: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `The new password has ${password.length} characters: it needs at least ${MIN_PASSWORD_LENGTH}.`;
  if (password !== again) return 'The two passwords differ: type the same new password in both fields.';
  return undefined;
}

/** Sets the password with the invitation (or password-reset) token an administrator passed on, and signs in. */
export function AcceptInvitationPage() {
  const [token, setToken] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const problem = passwordProblem(password, again);
    if (problem) return setError(new Error(problem));
    setBusy(true);
    setError(undefined);
    try {
      const body = { invitation_token: token.trim(), password };
      await beginSession(await api.post<LoginResponse>('/auth/accept-invitation', body, { anonymous: true }));
      navigate('#/gateways');
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <>
      <PageHeading title="Accept invitation" />
      <form class="form narrow" onSubmit={submit} noValidate>
        <Field label="Invitation token" autocomplete="off" spellcheck={false} required value={token} onValue={setToken} hint="The token your administrator gave you; it works once, within 24 hours." />
        <Field label="New password" type="password" autocomplete="new-password" required value={password} onValue={setPassword} hint={`At least ${MIN_PASSWORD_LENGTH} characters.`} />
        <Field label="Confirm password" type="password" autocomplete="new-password" required value={again} onValue={setAgain} />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
            Accept invitation
          </Button>
        </div>
      </form>
      <p>
        Have a password already? <a href="#/sign-in">Sign in</a>.
      </p>
    </>
  );
}

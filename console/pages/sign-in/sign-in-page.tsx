import { useState } from 'preact/hooks';
import type { LoginResponse } from '../../../src/client/auth';
import { Button } from '../../components/button';
import { ErrorMessage } from '../../components/error-message';
import { Field } from '../../components/field';
import { PageHeading } from '../../components/page-heading';
import { api } from '../../lib/api';
import { afterSignIn, navigate, type Route } from '../../lib/router';
import { lastSessionEnd } from '../../lib/session';
import { beginSession } from '../../lib/sign-in';
import { useSubmit } from '../../lib/use-submit';

/** Sign in with e-mail and password, then back to the page the user came from (`?next=`). */
export function SignInPage({ route }: { route: Route }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    await beginSession(await api.post<LoginResponse>('/auth/login', { email, password }, { anonymous: true }));
    navigate(afterSignIn(route));
  });
  return (
    <>
      <PageHeading title="Sign in" />
      {lastSessionEnd() === 'expired' && (
        <p class="notice" role="status">
          Your session has ended: sign in again to go on where you were.
        </p>
      )}
      <form class="form narrow" onSubmit={submit}>
        <Field label="Email" type="email" autocomplete="username" required value={email} onValue={setEmail} />
        <Field label="Password" type="password" autocomplete="current-password" required value={password} onValue={setPassword} />
        <ErrorMessage error={error} />
        <div class="actions">
          <Button type="submit" kind="primary" busy={busy}>
            Sign in
          </Button>
        </div>
      </form>
      <p>
        Invited by an administrator? <a href="#/accept-invitation">Accept the invitation</a> to set your password.
      </p>
    </>
  );
}

import { Button } from '../components/button';
import { navigate } from '../lib/router';
import { endSession, type Session } from '../lib/session';

/** The product's name and, when signed in, who is and the way out. */
export function Header({ session }: { session?: Session }) {
  const signOut = () => {
    endSession('signed-out');
    navigate('#/sign-in');
  };
  return (
    <header class="header">
      <a class="brand" href={session ? '#/gateways' : '#/sign-in'}>
        scanhub
      </a>
      {session && (
        <div class="who">
          <span class="user" title={session.user.roles.join(', ')}>
            {session.user.email}
          </span>
          <Button onClick={signOut}>Sign out</Button>
        </div>
      )}
    </header>
  );
}

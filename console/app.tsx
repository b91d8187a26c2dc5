import type { ComponentChildren } from 'preact';
import { PageHeading } from './components/page-heading';
import { Redirect } from './components/redirect';
import { can, useSession } from './lib/session';
import { afterSignIn, signInRoute, useRoute } from './lib/router';
import { pageOf } from './pages';
import { AcceptInvitationPage } from './pages/accept-invitation/accept-invitation-page';
import { SignInPage } from './pages/sign-in/sign-in-page';
import { Header } from './shell/header';
import { LazyPage } from './shell/lazy-page';
import { Navigation } from './shell/navigation';

/** Moves the focus to the page itself, past the header and the navigation. */
function SkipLink() {
  const skip = (event: Event) => {
    event.preventDefault();
    document.getElementById('main')?.focus();
  };
  return (
    <a class="skip-link" href="#main" onClick={skip}>
      Skip to the page
    </a>
  );
}

function Layout({ children, nav }: { children: ComponentChildren; nav?: ComponentChildren }) {
  const session = useSession();
  return (
    <>
      <SkipLink />
      <Header session={session} />
      {nav}
      <main id="main" class="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}

/**
 * The shell: routes by the hash (lib/router.ts). Signed out, every page but the invitation's
 * leads to sign-in, which leads back; signed in, a page the user may not see says so.
 */
export function App() {
  const session = useSession();
  const route = useRoute();
  if (route.path === '/accept-invitation') {
    return (
      <Layout>
        <AcceptInvitationPage />
      </Layout>
    );
  }
  if (!session) {
    if (route.path !== '/sign-in') return <Redirect to={signInRoute(route.hash)} />;
    return (
      <Layout>
        <SignInPage route={route} />
      </Layout>
    );
  }
  if (route.path === '/sign-in' || route.path === '/') return <Redirect to={afterSignIn(route)} />;
  const page = pageOf(route.path);
  return (
    <Layout nav={<Navigation path={route.path} />}>
      {!page ? (
        <>
          <PageHeading title="Page not found" />
          <p>
            The console has no page at <code>{route.hash}</code>. Go to the <a href="#/gateways">gateways</a>.
          </p>
        </>
      ) : !can(page.permission) ? (
        <>
          <PageHeading title={page.title} />
          <p>Your role does not allow this page (it needs the permission {page.permission}); ask an administrator.</p>
        </>
      ) : (
        <LazyPage key={page.path} page={page} />
      )}
    </Layout>
  );
}

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, type ReactNode } from 'react';
import { BASE, Link, navigate, usePath } from './router';
import { describeError, setCsrfToken, trpc, type Me } from './trpc';
import { Allowlist } from './pages/Allowlist';
import { Credits } from './pages/Credits';
import { Discounts } from './pages/Discounts';
import { Keys } from './pages/Keys';
import { Login } from './pages/Login';
import { StaffAccounts } from './pages/StaffAccounts';
import { StaffGrants } from './pages/StaffGrants';
import { StaffReviews } from './pages/StaffReviews';
import { Usage } from './pages/Usage';
import { Videos } from './pages/Videos';
import { WarningNotice } from './pages/WarningNotice';
import { ErrorMessage, Status } from './ui';

interface Page {
  path: string;
  title: string;
  render: (me: Me) => ReactNode;
}

/** Owners change their account's keys, allowlist and videos; nobody changes a disabled account's (the server refuses it too). */
const canChange = (me: Me) => me.user.role === 'owner' && !me.account?.disabled;

const OWNER_PAGES: Page[] = [
  { path: '/keys', title: 'API keys', render: (me) => <Keys canChange={canChange(me)} /> },
  { path: '/allowlist', title: 'IP allowlist', render: (me) => <Allowlist canChange={canChange(me)} /> },
  { path: '/credits', title: 'Credits', render: () => <Credits /> },
  { path: '/usage', title: 'Usage', render: () => <Usage /> },
  { path: '/discounts', title: 'Discounts', render: () => <Discounts /> },
  { path: '/videos', title: 'Videos', render: (me) => <Videos canChange={canChange(me)} /> },
];

const STAFF_PAGES: Page[] = [
  { path: '/staff/accounts', title: 'Accounts', render: () => <StaffAccounts /> },
  { path: '/staff/grants', title: 'Grants', render: () => <StaffGrants /> },
  { path: '/staff/reviews', title: 'Review queue', render: () => <StaffReviews /> },
];

export function App() {
  const queryClient = useQueryClient();
  const path = usePath();
  const me = useQuery({
    queryKey: ['me'],
    queryFn: async () => {
      try {
        const result = await trpc.dashboard.auth.me.query();
        setCsrfToken(result.csrf_token);
        return result;
      } catch (error) {
        if (describeError(error).code === 'SESSION_REQUIRED') return null;
        throw error;
      }
    },
    retry: false,
  });
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    // Moves focus to the new page's heading, so keyboard and screen reader users land on it.
    main.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path]);

  if (me.isPending) return <Status>Loading…</Status>;
  if (me.error) return <ErrorMessage error={me.error} />;
  const signedIn = me.data;
  if (!signedIn) {
    return (
      <Login
        onSignedIn={(result) => {
          queryClient.setQueryData(['me'], result);
          if (path === '/' || path === '/login') navigate(result.user.role === 'staff' ? '/staff/accounts' : '/keys');
        }}
      />
    );
  }
  const pages = signedIn.user.role === 'staff' ? STAFF_PAGES : OWNER_PAGES;
  const page = pages.find((candidate) => candidate.path === path) ?? pages[0]!;
  const signOut = async (everywhere: boolean) => {
    if (everywhere) await trpc.dashboard.auth.logoutEverywhere.mutate();
    else await trpc.dashboard.auth.logout.mutate();
    setCsrfToken(undefined);
    queryClient.clear();
    // A fresh page: nothing of the session stays in memory.
    window.location.assign(`${BASE}/`);
  };

  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <p className="brand">Gateway dashboard</p>
        <p className="who">
          {signedIn.user.email} ({signedIn.user.role}
          {signedIn.account ? ` of ${signedIn.account.name}` : ''})
          {signedIn.account?.disabled ? <strong className="error"> — this account is disabled (read only)</strong> : null}
        </p>
        <button type="button" onClick={() => void signOut(false)}>
          Sign out
        </button>
        <button type="button" onClick={() => void signOut(true)}>
          Sign out everywhere
        </button>
      </header>
      <nav aria-label="Pages" className="pages">
        <ul>
          {pages.map((candidate) => (
            <li key={candidate.path}>
              <Link to={candidate.path} current={candidate === page}>
                {candidate.title}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" ref={main}>
        {signedIn.user.role === 'staff' ? null : <WarningNotice />}
        {page.render(signedIn)}
      </main>
    </>
  );
}

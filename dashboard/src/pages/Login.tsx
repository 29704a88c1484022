import { useState, type FormEvent } from 'react';
import { setCsrfToken, trpc, type Me } from '../trpc';
import { ErrorMessage } from '../ui';

export function Login({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const me = await trpc.dashboard.auth.login.mutate({ email, password });
      setCsrfToken(me.csrf_token);
      setPassword('');
      onSignedIn(me);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <h1>Sign in to the gateway dashboard</h1>
      <form onSubmit={submit} aria-describedby="login-help">
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete="username" required value={email} onChange={(event) => setEmail(event.target.value)} />
        <label htmlFor="password">Password</label>
        <input id="password" type="password" autoComplete="current-password" required value={password} onChange={(event) => setPassword(event.target.value)} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <ErrorMessage error={error} />
        <p id="login-help" className="hint">
          Accounts are created by the operator (<code>npm run admin -- users:create</code>).
        </p>
      </form>
    </main>
  );
}

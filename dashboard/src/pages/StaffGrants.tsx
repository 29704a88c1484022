import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { trpc } from '../trpc';
import { AccountOptions } from '../account-options';
import { ErrorMessage, PageTitle, Status, when } from '../ui';

type Grant = Awaited<ReturnType<typeof trpc.admin.restricted.grants.list.query>>[number];

/** A `datetime-local` value (the staff member's local time) as an ISO timestamp, or undefined when empty. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function statusOf(grant: Grant): string {
  if (grant.active) return 'Active';
  return grant.revokedAt ? 'Revoked' : 'Expired';
}

/** Staff: who may use which restricted family (admin.restricted.grants.*, admin.restricted.families.list). */
export function StaffGrants() {
  const queryClient = useQueryClient();
  const families = useQuery({ queryKey: ['restricted-families'], queryFn: () => trpc.admin.restricted.families.list.query() });
  // The filters of the list; applied on submit so typing an id does not fire a query per key.
  const [filterAccount, setFilterAccount] = useState('');
  const [filterFamily, setFilterFamily] = useState('');
  const [includeInactive, setIncludeInactive] = useState(false);
  const [filters, setFilters] = useState<{ accountId?: string; family?: string; includeInactive: boolean }>({ includeInactive: false });
  const grants = useQuery({ queryKey: ['restricted-grants', filters], queryFn: () => trpc.admin.restricted.grants.list.query(filters) });

  const [account, setAccount] = useState('');
  const [family, setFamily] = useState('');
  const [expires, setExpires] = useState('');
  const [note, setNote] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ['restricted-grants'] });
  const grant = useMutation({
    mutationFn: () =>
      trpc.admin.restricted.grants.grant.mutate({ accountId: account.trim(), family: family || families.data?.[0]?.name || '', expiresAt: isoOf(expires), note: note.trim() || undefined }),
    onSuccess: (granted) => {
      setDone(`Granted ${granted.family} to ${granted.accountId}.`);
      setNote('');
      setExpires('');
      refresh();
    },
  });
  const revoke = useMutation({
    mutationFn: (target: { grant: Grant; note?: string }) => trpc.admin.restricted.grants.revoke.mutate({ accountId: target.grant.accountId, family: target.grant.family, note: target.note }),
    onSuccess: (revoked) => {
      setDone(`Revoked ${revoked.family} of ${revoked.accountId}.`);
      refresh();
    },
  });

  const applyFilters = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ accountId: filterAccount.trim() || undefined, family: filterFamily || undefined, includeInactive });
  };
  const submitGrant = (event: FormEvent) => {
    event.preventDefault();
    setDone(null);
    grant.mutate();
  };
  const askRevoke = (target: Grant) => {
    setDone(null);
    if (!window.confirm(`Revoke the ${target.family} access of ${target.accountId}? Its keys are refused on that family's models at once.`)) return;
    const reason = window.prompt('Note for the record (optional)', '');
    if (reason === null) return;
    revoke.mutate({ grant: target, note: reason.trim() || undefined });
  };

  return (
    <section>
      <PageTitle>Grants</PageTitle>
      <p className="hint">Models of a restricted family answer only the keys of accounts with an active grant for that family.</p>
      <ErrorMessage error={families.error} />
      <AccountOptions id="grant-accounts" />

      <h2>Grant access</h2>
      <ErrorMessage error={grant.error} />
      <form className="inline" onSubmit={submitGrant} aria-label="Grant access">
        <label htmlFor="grant-account">Account id</label>
        <input id="grant-account" required list="grant-accounts" maxLength={200} value={account} onChange={(event) => setAccount(event.target.value)} />
        <label htmlFor="grant-family">Family</label>
        <select id="grant-family" required value={family || families.data?.[0]?.name || ''} onChange={(event) => setFamily(event.target.value)}>
          {(families.data ?? []).map((entry) => (
            <option key={entry.name} value={entry.name}>
              {entry.name}
              {entry.description ? ` — ${entry.description}` : ''}
            </option>
          ))}
        </select>
        <label htmlFor="grant-expires">Expires (optional, your local time)</label>
        <input id="grant-expires" type="datetime-local" value={expires} onChange={(event) => setExpires(event.target.value)} />
        <label htmlFor="grant-note">Note (optional)</label>
        <input id="grant-note" maxLength={1000} value={note} onChange={(event) => setNote(event.target.value)} />
        <button type="submit" disabled={grant.isPending || !families.data?.length}>
          Grant
        </button>
      </form>
      {done ? <Status>{done}</Status> : null}
      <ErrorMessage error={revoke.error} />

      <h2>Grants</h2>
      <form className="filters" onSubmit={applyFilters} aria-label="Filter grants">
        <label>
          Account id
          <input type="search" list="grant-accounts" value={filterAccount} onChange={(event) => setFilterAccount(event.target.value)} />
        </label>
        <label>
          Family
          <select value={filterFamily} onChange={(event) => setFilterFamily(event.target.value)}>
            <option value="">any</option>
            {(families.data ?? []).map((entry) => (
              <option key={entry.name} value={entry.name}>
                {entry.name}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={includeInactive} onChange={(event) => setIncludeInactive(event.target.checked)} /> Include revoked and expired
        </label>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorMessage error={grants.error} />
      {grants.isPending ? <Status>Loading…</Status> : null}
      <table data-testid="grants-table">
        <caption>Grants ({grants.data?.length ?? 0})</caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Family</th>
            <th scope="col">Status</th>
            <th scope="col">Granted</th>
            <th scope="col">Expires</th>
            <th scope="col">Note</th>
            <th scope="col">Revoked</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(grants.data ?? []).map((entry) => (
            <tr key={entry.id}>
              <td>
                <code>{entry.accountId}</code>
              </td>
              <td>{entry.family}</td>
              <td>{statusOf(entry)}</td>
              <td>
                {when(entry.grantedAt)} by {entry.grantedBy}
              </td>
              <td>{entry.expiresAt ? when(entry.expiresAt) : 'never'}</td>
              <td>{entry.note ?? ''}</td>
              <td>{entry.revokedAt ? `${when(entry.revokedAt)} by ${entry.revokedBy ?? '?'}${entry.revokeNote ? ` (${entry.revokeNote})` : ''}` : ''}</td>
              <td className="actions">
                {entry.active ? (
                  <button type="button" className="danger" onClick={() => askRevoke(entry)} disabled={revoke.isPending}>
                    Revoke<span className="visually-hidden"> {entry.family} of {entry.accountId}</span>
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

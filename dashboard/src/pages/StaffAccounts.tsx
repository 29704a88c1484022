import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { trpc } from '../trpc';
import { credits, ErrorMessage, PageTitle, Status } from '../ui';

type Account = Awaited<ReturnType<typeof trpc.admin.accounts.list.query>>[number];

/** Staff: the admin procedures the CLI uses, authorised by the staff session. */
function AccountDetail({ account, onChanged }: { account: Account; onChanged: () => void }) {
  const [plan, setPlan] = useState(account.plan);
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [balance, setBalance] = useState<'current' | 'vault'>('current');
  const change = useMutation({
    mutationFn: async (action: 'disable' | 'enable' | 'plan' | 'credits') => {
      const input = { account_id: account.id };
      if (action === 'plan') return trpc.admin.accounts.setPlan.mutate({ ...input, plan });
      if (action === 'credits') return trpc.admin.accounts.adjustCredits.mutate({ ...input, amount: Number(amount), balance, note: reason });
      return trpc.admin.accounts[action].mutate(input);
    },
    onSuccess: () => {
      setAmount('');
      setReason('');
      onChanged();
    },
  });
  const adjust = (event: FormEvent) => {
    event.preventDefault();
    if (!reason.trim()) return;
    change.mutate('credits');
  };
  return (
    <div className="detail" aria-label={`Account ${account.name}`}>
      <h2>
        {account.name} <code>{account.id}</code>
      </h2>
      <ErrorMessage error={change.error} />
      <p>
        Status: <strong>{account.disabled ? 'Disabled' : 'Enabled'}</strong>{' '}
        <button type="button" className={account.disabled ? '' : 'danger'} onClick={() => change.mutate(account.disabled ? 'enable' : 'disable')}>
          {account.disabled ? 'Enable account' : 'Disable account'}
        </button>
      </p>
      <form
        className="inline"
        onSubmit={(event) => {
          event.preventDefault();
          change.mutate('plan');
        }}
      >
        <label htmlFor="plan">Plan</label>
        <input id="plan" value={plan} onChange={(event) => setPlan(event.target.value)} />
        <button type="submit">Set plan</button>
      </form>
      <form className="inline" onSubmit={adjust}>
        <label htmlFor="amount">Credits (negative removes)</label>
        <input id="amount" type="number" step="any" required value={amount} onChange={(event) => setAmount(event.target.value)} />
        <label htmlFor="balance">Balance</label>
        <select id="balance" value={balance} onChange={(event) => setBalance(event.target.value as 'current' | 'vault')}>
          <option value="current">current</option>
          <option value="vault">vault</option>
        </select>
        <label htmlFor="reason">Reason</label>
        <input id="reason" required maxLength={500} value={reason} onChange={(event) => setReason(event.target.value)} />
        <button type="submit">Adjust credits</button>
      </form>
      <dl className="facts">
        <dt>Current</dt>
        <dd>{credits(account.current_credits)}</dd>
        <dt>Vault</dt>
        <dd>{credits(account.vault_credits)}</dd>
        <dt>Held</dt>
        <dd>{credits(account.held_credits)}</dd>
        <dt>Allowlist</dt>
        <dd>{account.ip_allowlist.join(', ') || 'any address'}</dd>
      </dl>
    </div>
  );
}

export function StaffAccounts() {
  const queryClient = useQueryClient();
  const accounts = useQuery({ queryKey: ['staff-accounts'], queryFn: () => trpc.admin.accounts.list.query({ limit: 1000, offset: 0 }) });
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const term = search.trim().toLowerCase();
  const shown = (accounts.data ?? []).filter((account) => !term || account.name.toLowerCase().includes(term) || account.id.toLowerCase().includes(term));
  const current = accounts.data?.find((account) => account.id === selected);
  return (
    <section>
      <PageTitle>Accounts</PageTitle>
      <ErrorMessage error={accounts.error} />
      <label htmlFor="account-search">Search by name or id</label> <input id="account-search" type="search" value={search} onChange={(event) => setSearch(event.target.value)} />
      {accounts.isPending ? <Status>Loading…</Status> : null}
      <table>
        <caption>Accounts ({shown.length})</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Plan</th>
            <th scope="col">Status</th>
            <th scope="col">Available</th>
            <th scope="col">Open</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((account) => (
            <tr key={account.id} aria-selected={account.id === selected}>
              <td>{account.name}</td>
              <td>
                <code>{account.id}</code>
              </td>
              <td>{account.plan}</td>
              <td>{account.disabled ? 'Disabled' : 'Enabled'}</td>
              <td>{credits(account.current_credits + account.vault_credits - account.held_credits)}</td>
              <td>
                <button type="button" onClick={() => setSelected(account.id)}>
                  Manage<span className="visually-hidden"> {account.id}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {current ? <AccountDetail key={current.id} account={current} onChanged={() => void queryClient.invalidateQueries({ queryKey: ['staff-accounts'] })} /> : null}
    </section>
  );
}

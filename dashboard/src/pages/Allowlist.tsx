import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { trpc } from '../trpc';
import { ErrorMessage, PageTitle, Status } from '../ui';

/** Whether `address` is allowed by `entries`, roughly (exact address or IPv4 CIDR) — the gateway checks for real. */
function covers(entries: string[], address: string): boolean {
  if (entries.length === 0) return true;
  const toNumber = (ip: string) => ip.split('.').reduce((total, part) => total * 256 + Number(part), 0);
  return entries.some((entry) => {
    if (entry === address) return true;
    const [base, bits] = entry.split('/');
    if (!bits || !/^\d+\.\d+\.\d+\.\d+$/.test(address) || !/^\d+\.\d+\.\d+\.\d+$/.test(base ?? '')) return false;
    const prefix = Number(bits);
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    return ((toNumber(base!) & mask) >>> 0) === ((toNumber(address) & mask) >>> 0);
  });
}

export function Allowlist({ canChange }: { canChange: boolean }) {
  const queryClient = useQueryClient();
  const current = useQuery({ queryKey: ['allowlist'], queryFn: () => trpc.dashboard.account.allowlist.get.query() });
  const [entries, setEntries] = useState<string[]>([]);
  const [entry, setEntry] = useState('');
  useEffect(() => {
    if (current.data) setEntries(current.data.ip_allowlist);
  }, [current.data]);
  const save = useMutation({
    mutationFn: (list: string[]) => trpc.dashboard.account.allowlist.set.mutate({ ip_allowlist: list }),
    onSuccess: (data) => queryClient.setQueryData(['allowlist'], data),
  });

  const add = (event: FormEvent) => {
    event.preventDefault();
    const value = entry.trim();
    if (value && !entries.includes(value)) setEntries([...entries, value]);
    setEntry('');
  };
  const submit = () => {
    const address = current.data?.your_address ?? '';
    if (!covers(entries, address) && !window.confirm(`This list does not include your address (${address}): requests from here with this account's keys will be refused, and so will this dashboard's pages of the account (staff can change the list back). Save anyway?`)) return;
    save.mutate(entries);
  };
  const changed = JSON.stringify(entries) !== JSON.stringify(current.data?.ip_allowlist ?? []);

  return (
    <section>
      <PageTitle>IP allowlist</PageTitle>
      <p>
        Requests with this account's keys, and this dashboard's pages of the account, are accepted only from these addresses and CIDR ranges (IPv4 and
        IPv6). An empty list accepts every address.
      </p>
      {current.data ? (
        <p>
          The gateway sees this browser as <strong data-testid="your-address">{current.data.your_address}</strong>.
        </p>
      ) : null}
      <ErrorMessage error={current.error ?? save.error} />
      <ul className="entries" aria-label="Allowed addresses">
        {entries.length === 0 ? <li>Every address is allowed.</li> : null}
        {entries.map((item) => (
          <li key={item}>
            <code>{item}</code>{' '}
            {canChange ? (
              <button type="button" onClick={() => setEntries(entries.filter((other) => other !== item))}>
                Remove<span className="visually-hidden"> {item}</span>
              </button>
            ) : null}
          </li>
        ))}
      </ul>
      {canChange ? (
        <>
          <form onSubmit={add} className="inline">
            <label htmlFor="allow-entry">Address or range</label>
            <input id="allow-entry" value={entry} onChange={(event) => setEntry(event.target.value)} placeholder="203.0.113.7 or 2001:db8::/32" />
            <button type="submit">Add</button>
          </form>
          <p>
            <button type="button" onClick={submit} disabled={!changed || save.isPending}>
              Save allowlist
            </button>
          </p>
          {save.isSuccess && !changed ? <Status>Saved.</Status> : null}
        </>
      ) : (
        <Status>Only the account's owners can change the allowlist.</Status>
      )}
    </section>
  );
}

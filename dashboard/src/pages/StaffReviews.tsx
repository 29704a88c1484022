import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { AccountOptions } from '../account-options';
import { trpc } from '../trpc';
import { credits, ErrorMessage, PageTitle, Status, when } from '../ui';

type Action = 'dismiss' | 'warn' | 'revoke_grant' | 'disable_account';
interface Filters {
  status?: 'open' | 'resolved';
  decision?: 'flag' | 'reject';
  accountId?: string;
}

const PAGE_SIZE = 25;

const ACTIONS: { action: Action; label: string; danger: boolean; confirm?: (account: string, family: string) => string }[] = [
  { action: 'dismiss', label: 'Dismiss', danger: false },
  { action: 'warn', label: 'Warn', danger: false },
  { action: 'revoke_grant', label: 'Revoke grant', danger: true, confirm: (account, family) => `Revoke the ${family} access of ${account}? Its keys are refused on that family's models at once.` },
  { action: 'disable_account', label: 'Disable account', danger: true, confirm: (account) => `Disable the account ${account}? All its keys are refused at once.` },
];

const ACTION_NAMES: Record<Action, string> = { dismiss: 'Dismissed', warn: 'Warned', revoke_grant: 'Grant revoked', disable_account: 'Account disabled' };

/** One item: what was asked (as plain text), why it was caught, who asked, and what staff did. */
function ReviewDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const queryClient = useQueryClient();
  const detail = useQuery({ queryKey: ['review', id], queryFn: () => trpc.admin.restricted.review.get.query({ id }) });
  const [note, setNote] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);
  const loaded = detail.isSuccess;
  useEffect(() => {
    // Keyboard users land on the item they opened, below the list.
    if (loaded) heading.current?.focus();
  }, [loaded]);
  const resolve = useMutation({
    mutationFn: (action: Action) => trpc.admin.restricted.review.resolve.mutate({ id, action, note: note.trim() || undefined }),
    onSuccess: () => {
      setNote('');
      void queryClient.invalidateQueries({ queryKey: ['review', id] });
      onChanged();
    },
  });
  if (detail.isPending) return <Status>Loading the item…</Status>;
  if (detail.error) return <ErrorMessage error={detail.error} />;
  const { item, account, actions, recentUsage } = detail.data;
  const take = (event: FormEvent, entry: (typeof ACTIONS)[number]) => {
    event.preventDefault();
    if (entry.confirm && !window.confirm(entry.confirm(item.accountId, item.family))) return;
    resolve.mutate(entry.action);
  };
  return (
    <div className="detail" aria-label={`Review item ${item.id}`}>
      <h2 tabIndex={-1} ref={heading}>
        Item <code>{item.id}</code>
      </h2>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid="review-status">{item.status === 'open' ? 'Open' : `Resolved: ${ACTION_NAMES[item.resolution ?? 'dismiss']}`}</dd>
        <dt>Decision</dt>
        <dd>{item.decision === 'reject' ? 'Rejected (not served)' : 'Flagged (served)'}</dd>
        <dt>Rule</dt>
        <dd>
          {item.ruleId ?? '—'}
          {item.matchedRules.length > 1 ? ` (also matched: ${item.matchedRules.filter((rule) => rule !== item.ruleId).join(', ')})` : ''}
        </dd>
        <dt>Categories</dt>
        <dd>{item.categories.join(', ') || '—'}</dd>
        <dt>Role play</dt>
        <dd>{item.roleplay ? 'Yes' : 'No'}</dd>
      </dl>
      <h3>Excerpt</h3>
      {/* Plain text: React escapes it; the prompt is never interpreted as markup. */}
      <pre className="excerpt" data-testid="review-excerpt">
        {item.excerpt}
      </pre>
      <table>
        <caption>Scores</caption>
        <thead>
          <tr>
            <th scope="col">Category</th>
            <th scope="col">Score</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(item.scores)
            .sort(([, a], [, b]) => b - a)
            .map(([category, score]) => (
              <tr key={category}>
                <td>{category}</td>
                <td>{score.toFixed(3)}</td>
              </tr>
            ))}
        </tbody>
      </table>
      <h3>Request</h3>
      <dl className="facts">
        <dt>When</dt>
        <dd>{when(item.createdAt)}</dd>
        <dt>Model</dt>
        <dd>
          {item.model} ({item.family})
        </dd>
        <dt>Endpoint</dt>
        <dd>{item.endpoint}</dd>
        <dt>Request id</dt>
        <dd>
          <code>{item.requestId}</code>
        </dd>
        <dt>Key</dt>
        <dd>{item.keyId ? <code>{item.keyId}</code> : '—'}</dd>
        <dt>Client address</dt>
        <dd>{item.clientAddress ?? '—'}</dd>
      </dl>
      <h3>Account</h3>
      <dl className="facts">
        <dt>Account</dt>
        <dd>
          {account.name} <code>{account.id}</code>
        </dd>
        <dt>Plan</dt>
        <dd>{account.plan}</dd>
        <dt>Status</dt>
        <dd data-testid="review-account-status">{account.disabled ? 'Disabled' : 'Enabled'}</dd>
        <dt>Created</dt>
        <dd>{when(account.createdAt)}</dd>
        <dt>Grants</dt>
        <dd>
          {account.grants.length === 0
            ? 'none'
            : account.grants.map((grant) => `${grant.family} (${grant.active ? 'active' : grant.revokedAt ? 'revoked' : 'expired'})`).join(', ')}
        </dd>
        <dt>Reviews</dt>
        <dd>
          {account.openReviews} open of {account.totalReviews}; {account.warnings} warning{account.warnings === 1 ? '' : 's'}
        </dd>
      </dl>
      <table>
        <caption>Recent usage of the account</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Model</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col">Tokens in / out</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {recentUsage.length === 0 ? (
            <tr>
              <td colSpan={6}>No requests recorded.</td>
            </tr>
          ) : (
            recentUsage.map((usage) => (
              <tr key={usage.requestId}>
                <td>{when(usage.createdAt)}</td>
                <td>{usage.model}</td>
                <td>
                  {usage.endpoint}
                  {usage.stream ? ' (stream)' : ''}
                </td>
                <td>
                  {usage.status}
                  {usage.errorCode ? ` ${usage.errorCode}` : ''}
                </td>
                <td>
                  {usage.inputTokens} / {usage.outputTokens}
                </td>
                <td>{credits(usage.cost)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      <h3>Actions</h3>
      <ErrorMessage error={resolve.error} />
      <form className="review-actions" onSubmit={(event) => event.preventDefault()} aria-label="Resolve the item">
        <label htmlFor="review-note">Note (optional, kept with the action)</label>
        <textarea id="review-note" rows={2} maxLength={1000} value={note} aria-describedby="review-note-hint" onChange={(event) => setNote(event.target.value)} />
        <p className="hint" id="review-note-hint">
          With Warn, the account's people see on their dashboard its date, the family, the rule and this note (not the excerpt).
        </p>
        <div className="buttons">
          {ACTIONS.map((entry) => (
            <button key={entry.action} type="button" className={entry.danger ? 'danger' : ''} disabled={resolve.isPending} onClick={(event) => take(event, entry)}>
              {entry.label}
            </button>
          ))}
        </div>
      </form>
      <table data-testid="review-actions">
        <caption>Actions taken ({actions.length})</caption>
        <thead>
          <tr>
            <th scope="col">Action</th>
            <th scope="col">By</th>
            <th scope="col">When</th>
            <th scope="col">Note</th>
          </tr>
        </thead>
        <tbody>
          {actions.length === 0 ? (
            <tr>
              <td colSpan={4}>None yet.</td>
            </tr>
          ) : (
            actions.map((action, index) => (
              <tr key={`${action.at}-${index}`}>
                <td>{ACTION_NAMES[action.action]}</td>
                <td>{action.actor}</td>
                <td>{when(action.at)}</td>
                <td>{action.note ?? ''}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

/** Staff: the usage-check review queue of the restricted families (admin.restricted.review.*). */
export function StaffReviews() {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<'' | 'open' | 'resolved'>('open');
  const [decision, setDecision] = useState<'' | 'flag' | 'reject'>('');
  const [account, setAccount] = useState('');
  const [filters, setFilters] = useState<Filters>({ status: 'open' });
  // The cursors of the pages seen so far: the last is the current page's, so Previous pops one.
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const cursor = cursors[cursors.length - 1];
  const list = useQuery({
    queryKey: ['reviews', filters, cursor],
    queryFn: () => trpc.admin.restricted.review.list.query({ ...filters, limit: PAGE_SIZE, cursor }),
  });
  const [selected, setSelected] = useState<string | null>(null);

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilters({ status: status || undefined, decision: decision || undefined, accountId: account.trim() || undefined });
    setCursors([undefined]);
  };
  const items = list.data?.items ?? [];
  return (
    <section>
      <PageTitle>Review queue</PageTitle>
      <p className="hint">Requests to restricted families that the usage check flagged (served) or rejected (not served).</p>
      <AccountOptions id="review-accounts" />
      <form className="filters" onSubmit={apply} aria-label="Filter the queue">
        <label>
          Status
          <select value={status} onChange={(event) => setStatus(event.target.value as typeof status)}>
            <option value="">any</option>
            <option value="open">open</option>
            <option value="resolved">resolved</option>
          </select>
        </label>
        <label>
          Decision
          <select value={decision} onChange={(event) => setDecision(event.target.value as typeof decision)}>
            <option value="">any</option>
            <option value="flag">flag</option>
            <option value="reject">reject</option>
          </select>
        </label>
        <label>
          Account id
          <input type="search" list="review-accounts" value={account} onChange={(event) => setAccount(event.target.value)} />
        </label>
        <button type="submit">Apply filters</button>
      </form>
      <ErrorMessage error={list.error} />
      {list.isPending ? <Status>Loading…</Status> : null}
      <table data-testid="reviews-table">
        <caption>Review items, newest first ({items.length} on this page)</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Account</th>
            <th scope="col">Model</th>
            <th scope="col">Decision</th>
            <th scope="col">Rule</th>
            <th scope="col">Status</th>
            <th scope="col">Open</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item) => (
            <tr key={item.id} aria-selected={item.id === selected}>
              <td>{when(item.createdAt)}</td>
              <td>
                <code>{item.accountId}</code>
              </td>
              <td>{item.model}</td>
              <td>{item.decision}</td>
              <td>{item.ruleId ?? '—'}</td>
              <td>{item.status === 'open' ? 'open' : `resolved (${item.resolution ?? ''})`}</td>
              <td>
                <button type="button" onClick={() => setSelected(item.id)}>
                  View<span className="visually-hidden"> {item.id}</span>
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && items.length === 0 ? <p>No items match.</p> : null}
      <nav aria-label="Review queue pages" className="pager">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous
        </button>
        <span>Page {cursors.length}</span>
        <button type="button" disabled={!list.data?.nextCursor} onClick={() => setCursors([...cursors, list.data?.nextCursor ?? undefined])}>
          Next
        </button>
      </nav>
      {selected ? <ReviewDetail key={selected} id={selected} onChanged={() => void queryClient.invalidateQueries({ queryKey: ['reviews'] })} /> : null}
    </section>
  );
}

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { trpc } from '../trpc';
import { CopyButton, ErrorMessage, PageTitle, Status, when } from '../ui';

type Key = Awaited<ReturnType<typeof trpc.dashboard.account.keys.list.query>>[number];

export function Keys({ canChange }: { canChange: boolean }) {
  const queryClient = useQueryClient();
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => trpc.dashboard.account.keys.list.query() });
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['keys'] });

  const create = useMutation({
    mutationFn: (keyName: string) => trpc.dashboard.account.keys.create.mutate({ name: keyName }),
    onSuccess: (result) => {
      setCreated({ name: result.name, key: result.key });
      setName('');
      void refresh();
    },
  });
  const change = useMutation({
    mutationFn: async (action: { kind: 'enable' | 'disable' | 'delete'; key: Key } | { kind: 'rename'; key: Key; name: string }) => {
      const input = { key_id: action.key.id };
      if (action.kind === 'rename') return trpc.dashboard.account.keys.rename.mutate({ ...input, name: action.name });
      return trpc.dashboard.account.keys[action.kind].mutate(input);
    },
    onSuccess: () => void refresh(),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(name.trim() || 'default');
  };

  return (
    <section aria-labelledby="page-title">
      <PageTitle>API keys</PageTitle>
      {canChange ? (
        <form onSubmit={submit} className="inline">
          <label htmlFor="key-name">New key name</label>
          <input id="key-name" value={name} maxLength={200} onChange={(event) => setName(event.target.value)} placeholder="e.g. production" />
          <button type="submit" disabled={create.isPending}>
            Create key
          </button>
        </form>
      ) : (
        <Status>Only the account's owners can change keys.</Status>
      )}
      <ErrorMessage error={create.error ?? change.error} />
      {created ? (
        <div className="notice" role="status" aria-live="polite">
          <p>
            The key <strong>{created.name}</strong> — copy it now, it is shown only this once:
          </p>
          <p>
            <code data-testid="new-key">{created.key}</code> <CopyButton text={created.key} label="Copy key" />{' '}
            <button type="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </p>
        </div>
      ) : null}
      {keys.isPending ? <Status>Loading keys…</Status> : null}
      <ErrorMessage error={keys.error} />
      {keys.data ? (
        <table>
          <caption>Keys of this account</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              {canChange ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.id} data-key-id={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.display}</code>
                </td>
                <td>{key.enabled ? 'Enabled' : 'Disabled'}</td>
                <td>{when(key.created_at)}</td>
                <td>{when(key.last_used_at)}</td>
                {canChange ? (
                  <td className="actions">
                    <button
                      type="button"
                      onClick={() => {
                        const next = window.prompt(`New name for "${key.name}"`, key.name);
                        if (next && next.trim()) change.mutate({ kind: 'rename', key, name: next.trim() });
                      }}
                    >
                      Rename<span className="visually-hidden"> {key.name}</span>
                    </button>
                    <button type="button" onClick={() => change.mutate({ kind: key.enabled ? 'disable' : 'enable', key })}>
                      {key.enabled ? 'Disable' : 'Enable'}
                      <span className="visually-hidden"> {key.name}</span>
                    </button>
                    <button
                      type="button"
                      className="danger"
                      onClick={() => {
                        if (window.confirm(`Delete the key "${key.name}" for good? Requests with it will be refused.`)) change.mutate({ kind: 'delete', key });
                      }}
                    >
                      Delete<span className="visually-hidden"> {key.name}</span>
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

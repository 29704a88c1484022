import { useQuery } from '@tanstack/react-query';
import { trpc } from '../trpc';
import { credits, ErrorMessage, PageTitle, Status, when } from '../ui';

export function Credits() {
  const query = useQuery({ queryKey: ['credits'], queryFn: () => trpc.dashboard.account.credits.query(), refetchInterval: 15_000 });
  const data = query.data;
  return (
    <section>
      <PageTitle>Credits</PageTitle>
      <ErrorMessage error={query.error} />
      {query.isPending ? <Status>Loading…</Status> : null}
      {data ? (
        <>
          <dl className="facts">
            <dt>Available now</dt>
            <dd data-testid="available-credits">{credits(data.available_credits)}</dd>
            <dt>Current credits</dt>
            <dd>{credits(data.current_credits)}</dd>
            <dt>Vault credits</dt>
            <dd>{credits(data.vault_credits)}</dd>
            <dt>Held by requests in flight</dt>
            <dd>{credits(data.held_credits)}</dd>
            <dt>Used this cycle</dt>
            <dd>{credits(data.credits_used)}</dd>
            <dt>Daily limit</dt>
            <dd>{data.daily_limit === null ? 'none' : credits(data.daily_limit)}</dd>
            <dt>Plan</dt>
            <dd>{data.plan}</dd>
            <dt>Cycle</dt>
            <dd>{data.reset_cycle_days} day(s)</dd>
            <dt>Last reset</dt>
            <dd>{when(data.last_reset)}</dd>
            <dt>Next reset</dt>
            <dd>{when(data.reset_time)}</dd>
          </dl>
          <h2>Open holds</h2>
          {data.open_holds.length === 0 ? (
            <p>No credits are held right now.</p>
          ) : (
            <table>
              <caption>Credits reserved for work in progress</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Held by</th>
                  <th scope="col">Credits</th>
                </tr>
              </thead>
              <tbody>
                {data.open_holds.map((hold) => (
                  <tr key={`${hold.kind}:${hold.id}`}>
                    <td>{hold.kind === 'video' ? 'Video job' : 'Requests in flight'}</td>
                    <td>
                      <code>{hold.id}</code>
                    </td>
                    <td>{credits(hold.amount)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : null}
    </section>
  );
}

import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { trpc } from '../trpc';
import { ErrorMessage, PageTitle, Status } from '../ui';

function remaining(seconds: number): string {
  const clamped = Math.max(0, seconds);
  const hours = Math.floor(clamped / 3600);
  const minutes = Math.floor((clamped % 3600) / 60);
  return `${hours} h ${String(minutes).padStart(2, '0')} min ${String(clamped % 60).padStart(2, '0')} s`;
}

export function Discounts() {
  const query = useQuery({ queryKey: ['discounts'], queryFn: () => trpc.dashboard.account.discounts.query() });
  const [now, setNow] = useState(() => Math.floor(Date.now() / 1000));
  useEffect(() => {
    const timer = setInterval(() => setNow(Math.floor(Date.now() / 1000)), 1000);
    return () => clearInterval(timer);
  }, []);
  const data = query.data;
  return (
    <section>
      <PageTitle>Discounts of the day</PageTitle>
      <ErrorMessage error={query.error} />
      {query.isPending ? <Status>Loading…</Status> : null}
      {data ? (
        <>
          <p>
            Next rotation in <strong>{remaining(data.next_rotation - now)}</strong>.
          </p>
          {data.discounts.length === 0 ? (
            <p>No discounts for this account today.</p>
          ) : (
            <table>
              <caption>Models at a lower price today</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Discount</th>
                  <th scope="col">Ends in</th>
                </tr>
              </thead>
              <tbody>
                {data.discounts.map((discount) => (
                  <tr key={discount.model}>
                    <td>
                      <code>{discount.model}</code>
                    </td>
                    <td>{discount.percentage} %</td>
                    <td>{remaining(discount.expires_at - now)}</td>
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

import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { trpc } from '../trpc';
import { credits, ErrorMessage, PageTitle, Status, when } from '../ui';

interface Filters {
  model?: string;
  endpoint?: string;
  from?: string;
  to?: string;
}

/** Spend per day as an SVG bar chart, with the numbers in a table for screen readers. */
function DayChart({ days }: { days: Array<{ day: string; cost: number; requests: number }> }) {
  if (days.length === 0) return <p>No spend in this period.</p>;
  const max = Math.max(...days.map((day) => day.cost), 1e-9);
  const width = Math.max(300, days.length * 28);
  return (
    <figure>
      <svg role="img" aria-labelledby="day-chart-title" viewBox={`0 0 ${width} 140`} width="100%" height="140" className="chart">
        <title id="day-chart-title">Spend per day</title>
        {days.map((day, index) => {
          const height = Math.max(1, (day.cost / max) * 110);
          return (
            <g key={day.day}>
              <rect x={index * 28 + 4} y={120 - height} width={20} height={height} className="bar">
                <title>{`${day.day}: ${credits(day.cost)} credits, ${day.requests} requests`}</title>
              </rect>
              <text x={index * 28 + 14} y={135} textAnchor="middle" className="axis">
                {day.day.slice(8)}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>Spend per UTC day (credits), last 30 days.</figcaption>
    </figure>
  );
}

export function Usage() {
  const [page, setPage] = useState(1);
  const [filters, setFilters] = useState<Filters>({});
  const [draft, setDraft] = useState<Filters>({});
  const [exportError, setExportError] = useState<unknown>(null);
  const input = { ...filters, page, limit: 20 };
  const list = useQuery({ queryKey: ['usage', input], queryFn: () => trpc.dashboard.account.usage.list.query(input) });
  const totals = useQuery({ queryKey: ['usage-totals'], queryFn: () => trpc.dashboard.account.usage.totals.query({ days: 30 }) });
  const pages = list.data ? Math.max(1, Math.ceil(list.data.pagination.total / list.data.pagination.limit)) : 1;

  const apply = (event: FormEvent) => {
    event.preventDefault();
    const clean: Filters = {};
    for (const name of ['model', 'endpoint', 'from', 'to'] as const) {
      const value = draft[name]?.trim();
      if (value) clean[name] = name === 'from' || name === 'to' ? new Date(value).toISOString() : value;
    }
    setFilters(clean);
    setPage(1);
  };
  const exportCsv = async () => {
    setExportError(null);
    try {
      const { csv, filename } = await trpc.dashboard.account.usage.csv.query(filters);
      const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = filename;
      link.click();
      URL.revokeObjectURL(url);
    } catch (error) {
      setExportError(error);
    }
  };
  const field = (name: keyof Filters) => ({ value: draft[name] ?? '', onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value }) });

  return (
    <section>
      <PageTitle>Usage</PageTitle>
      <ErrorMessage error={totals.error ?? list.error ?? exportError} />
      {totals.data ? (
        <div className="charts">
          <DayChart days={totals.data.days} />
          <table>
            <caption>Spend per model, last 30 days</caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Requests</th>
                <th scope="col">Credits</th>
              </tr>
            </thead>
            <tbody>
              {totals.data.models.map((model) => (
                <tr key={model.model}>
                  <td>{model.model}</td>
                  <td>{model.requests}</td>
                  <td>{credits(model.cost)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <form onSubmit={apply} className="filters" aria-label="Filter requests">
        <label>
          Model <input {...field('model')} />
        </label>
        <label>
          Endpoint <input {...field('endpoint')} placeholder="/v1/chat/completions" />
        </label>
        <label>
          From <input type="datetime-local" {...field('from')} />
        </label>
        <label>
          To <input type="datetime-local" {...field('to')} />
        </label>
        <button type="submit">Apply filters</button>
        <button type="button" onClick={() => void exportCsv()}>
          Export CSV
        </button>
      </form>
      {list.isPending ? <Status>Loading…</Status> : null}
      {list.data ? (
        <>
          <table data-testid="usage-table">
            <caption>Charged requests, newest first ({list.data.pagination.total} in all)</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Request</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Model</th>
                <th scope="col">Tokens in / out</th>
                <th scope="col">Discount</th>
                <th scope="col">Cost (credits)</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((row) => (
                <tr key={row.id}>
                  <td>{when(row.created_at)}</td>
                  <td>
                    <code>{row.id}</code>
                  </td>
                  <td>{row.endpoint}</td>
                  <td>{row.model}</td>
                  <td>
                    {row.input_tokens} / {row.output_tokens}
                  </td>
                  <td>{row.discount_percentage} %</td>
                  <td>{credits(row.cost)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav aria-label="Usage pages" className="pager">
            <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
              Previous
            </button>
            <span>
              Page {page} of {pages}
            </span>
            <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
              Next
            </button>
          </nav>
        </>
      ) : null}
    </section>
  );
}

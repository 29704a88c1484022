import { useQuery } from '@tanstack/react-query';
import { trpc } from '../trpc';
import { when } from '../ui';

/** Warnings given within this many days are shown. */
const RECENT_DAYS = 90;
const DAY_MS = 86_400_000;

/**
 * A notice above every page of the account while staff warned it in the last 90 days about
 * its use of a restricted model family: when, the family and rule, and what staff wrote.
 * A failed load shows nothing here: the page's own query shows the error (an IP refusal, say).
 */
export function WarningNotice() {
  const query = useQuery({ queryKey: ['warnings'], queryFn: () => trpc.dashboard.account.warnings.query() });
  if (!query.data) return null;
  const since = Date.now() - RECENT_DAYS * DAY_MS;
  const recent = query.data.warnings.filter((warning) => Date.parse(warning.given_at) >= since);
  if (recent.length === 0) return null;
  return (
    <section className="notice warning" aria-labelledby="warning-notice-title" data-testid="warning-notice">
      <p id="warning-notice-title">
        <strong>
          {recent.length === 1 ? 'A warning' : `${recent.length} warnings`} from staff in the last {RECENT_DAYS} days
        </strong>{' '}
        about {recent.length === 1 ? 'a request' : 'requests'} to a restricted model family that its usage check flagged or rejected.
      </p>
      <table>
        <caption className="visually-hidden">Warnings from staff, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Model family</th>
            <th scope="col">Rule</th>
            <th scope="col">Note from staff</th>
          </tr>
        </thead>
        <tbody>
          {recent.map((warning, index) => (
            <tr key={`${warning.given_at}:${index}`}>
              <td>{when(warning.given_at)}</td>
              <td>
                <code>{warning.family}</code>
              </td>
              <td>{warning.rule_id === null ? '—' : <code>{warning.rule_id}</code>}</td>
              <td>{warning.note ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

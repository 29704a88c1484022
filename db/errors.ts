/**
 * Which failures mean "the database cannot be reached right now" rather than
 * "this query is wrong": the first kind is answered 503 with `retry-after`
 * (the client should try again, and the gateway recovers by itself once the
 * database is back), the second stays a 500. This is the one place that
 * knows the driver's ways of saying so.
 */

/** What a client is told to wait after a database failure, in seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket errors of the connection to PostgreSQL (refused, cut, unreachable, name not resolved). */
const CONNECTION_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server going away or not accepting work: 57P01 admin_shutdown
 * (also what `pg_terminate_backend` sends), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or in recovery), 53300 too_many_connections.
 * Class 08 (connection exception) is matched as a class.
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/**
 * Messages of `pg` and `pg-pool` errors that carry no code: the socket closed
 * under a client ("Connection terminated unexpectedly"), a connect that timed
 * out ("timeout exceeded when trying to connect", "Connection terminated due
 * to connection timeout"), a query on a client that already lost its connection.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /is not queryable/,
  /^connect ECONNREFUSED/,
];

/** True when `error` (or an error it wraps) says the database is unreachable, not that a statement failed. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return someErrorInChain(error, 0);
}

function someErrorInChain(error: unknown, depth: number): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { code, message, cause } = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof code === 'string') {
    if (CONNECTION_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message))) return true;
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (error instanceof AggregateError && error.errors.some((inner) => someErrorInChain(inner, depth + 1))) return true;
  return someErrorInChain(cause, depth + 1);
}

import type { PGlite } from '@electric-sql/pglite';
import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * Presents one embedded PGlite database as a `pg`-style pool for Kysely's
 * PostgresDialect. PGlite has a single connection, so a connection is lent to
 * one borrower at a time (a transaction owns it until it is released); other
 * borrowers queue in order.
 */
export class PGlitePool implements PostgresPool {
  private busy = false;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly pglite: PGlite) {}

  async connect(): Promise<PostgresPoolClient> {
    if (this.busy) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.busy = true;
    let released = false;
    const client = {
      query: async <R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> => {
        const result = await this.pglite.query<R>(sql, parameters as unknown[]);
        const command = (sql.trimStart().slice(0, 6).toUpperCase() as PostgresQueryResult<R>['command']) || 'SELECT';
        return { command, rowCount: result.affectedRows ?? result.rows.length, rows: result.rows };
      },
      release: () => {
        if (released) return;
        released = true;
        const next = this.waiters.shift();
        if (next) next();
        else this.busy = false;
      },
    };
    return client as unknown as PostgresPoolClient;
  }

  async end(): Promise<void> {
    // The owner closes PGlite itself (after the last query has drained).
  }
}

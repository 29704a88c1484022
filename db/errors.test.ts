import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGatewayError } from '../server/errors.js';
import { createTestDatabase, type TestDatabase } from '../test/support/database.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from './errors.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

function withCode(code: string, message = 'failure'): Error {
  return Object.assign(new Error(message), { code });
}

describe('isDatabaseUnavailable', () => {
  it('recognises socket failures, server shutdown states, connection exceptions and pool timeouts', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '53300', '08000', '08003', '08006', '08P01']) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(true);
    }
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
    ]) {
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
    }
  });

  it('looks through causes and aggregate errors', () => {
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: withCode('57P01') }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], ''))).toBe(true);
  });

  it('leaves statement errors, programming errors and non-errors alone', () => {
    for (const code of ['23505', '42601', '40001', '22003', 'ERR_INVALID_ARG_TYPE']) {
      expect(isDatabaseUnavailable(withCode(code)), code).toBe(false);
    }
    expect(isDatabaseUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
    expect(isDatabaseUnavailable('Connection terminated')).toBe(false);
  });

  it('classifies what the pg driver really throws', async () => {
    const refused = new pg.Client({ host: '127.0.0.1', port: 1, user: 'postgres', database: 'postgres' });
    const refusal = await refused.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDatabaseUnavailable(refusal)).toBe(true);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const syntax = await client.query('SELEC 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDatabaseUnavailable(syntax)).toBe(false);
    await client.end();
  });
});

describe('toGatewayError on a database outage', () => {
  it('answers 503 SERVICE_UNAVAILABLE with retry-after, and a broken query stays a 500', () => {
    const unavailable = toGatewayError(new Error('Connection terminated unexpectedly'));
    expect(unavailable.code).toBe('SERVICE_UNAVAILABLE');
    expect(unavailable.status).toBe(503);
    expect(unavailable.retryAfter).toBe(DATABASE_RETRY_AFTER_SECONDS);
    expect(unavailable.message).not.toMatch(/Connection terminated/);
    expect(toGatewayError(withCode('42601', 'syntax error')).status).toBe(500);
  });
});

import { describe, expect, it } from 'vitest';
import { readConfig } from './config.js';

describe('readConfig: outage settings', () => {
  it('defaults to failing open, a 10 s breaker and a 5 s database connect timeout', () => {
    const config = readConfig({});
    expect(config.rateLimitFailMode).toBe('open');
    expect(config.rateLimitBreakerOpenMs).toBe(10_000);
    expect(config.databaseConnectTimeoutMs).toBe(5_000);
  });

  it('reads RATE_LIMIT_FAIL_MODE, RATE_LIMIT_BREAKER_OPEN_MS and DATABASE_CONNECT_TIMEOUT_MS, and refuses an unknown fail mode', () => {
    const config = readConfig({ RATE_LIMIT_FAIL_MODE: 'closed', RATE_LIMIT_BREAKER_OPEN_MS: '2500', DATABASE_CONNECT_TIMEOUT_MS: '750' });
    expect(config.rateLimitFailMode).toBe('closed');
    expect(config.rateLimitBreakerOpenMs).toBe(2_500);
    expect(config.databaseConnectTimeoutMs).toBe(750);
    expect(() => readConfig({ RATE_LIMIT_FAIL_MODE: 'shut' })).toThrow(/RATE_LIMIT_FAIL_MODE/);
  });
});

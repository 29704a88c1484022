import { describe, expect, it } from 'vitest';
import { listenOrigin, readConfig } from './config.js';

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

describe('listenOrigin: where signed links point without PUBLIC_BASE_URL', () => {
  it('reaches a wildcard listen address on the loopback and brackets IPv6', () => {
    expect(listenOrigin('0.0.0.0', 8080)).toBe('http://127.0.0.1:8080');
    expect(listenOrigin('::', 9000)).toBe('http://127.0.0.1:9000');
    expect(listenOrigin('::1', 8080)).toBe('http://[::1]:8080');
    expect(listenOrigin('gw.internal', 80)).toBe('http://gw.internal:80');
  });

  it('normalises PUBLIC_BASE_URL and refuses one that is not http(s)', () => {
    expect(readConfig({ PUBLIC_BASE_URL: 'https://gw.example.com/base/' }).publicBaseUrl).toBe('https://gw.example.com/base');
    expect(() => readConfig({ PUBLIC_BASE_URL: 'ftp://gw.example.com' })).toThrow(/PUBLIC_BASE_URL/);
  });
});

describe('readConfig: RATE_LIMITS', () => {
  it('has the plans free (20 per minute) and pro (600) by default', () => {
    expect(readConfig({}).rateLimits).toEqual({ free: 20, pro: 600 });
  });

  it('adds plans to the defaults and changes the limits it names, never removing free or pro', () => {
    expect(readConfig({ RATE_LIMITS: 'team=100' }).rateLimits).toEqual({ free: 20, pro: 600, team: 100 });
    expect(readConfig({ RATE_LIMITS: 'pro=0, free=5' }).rateLimits).toEqual({ free: 5, pro: 0 });
  });

  it('refuses an entry that is not plan=number', () => {
    expect(() => readConfig({ RATE_LIMITS: 'team' })).toThrow(/RATE_LIMITS entry "team"/);
    expect(() => readConfig({ RATE_LIMITS: 'team=-1' })).toThrow(/RATE_LIMITS/);
  });
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listenOrigin, readConfig } from './config.js';
import { ConfigError, ENVIRONMENT_VARIABLES, withReadmeTables } from './config.schema.js';
import { PROJECT_ROOT } from './project-root.js';

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
    expect(() => readConfig({ RATE_LIMITS: 'team' })).toThrow(/RATE_LIMITS: must be plan=number entries separated by commas \(e.g. team=100,pro=0\), got "team"/);
    expect(() => readConfig({ RATE_LIMITS: 'team=-1' })).toThrow(/RATE_LIMITS/);
  });
});

describe('the environment schema (config.schema.ts)', () => {
  it('names every bad variable in one error, never echoing a secret', () => {
    let error: unknown;
    try {
      readConfig({ PORT: 'eighty', LOG_LEVEL: 'verbose', GATEWAY_BOOTSTRAP_KEY: 'sk-umg-short-secret', TRUSTED_PROXIES: '10.0.0.0/8, not-an-address', VIDEO_CONCURRENCY: '0' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((problem) => problem.variable).sort()).toEqual(['GATEWAY_BOOTSTRAP_KEY', 'LOG_LEVEL', 'PORT', 'TRUSTED_PROXIES', 'VIDEO_CONCURRENCY']);
    expect((error as ConfigError).message).toContain('LOG_LEVEL: must be one of debug, info, warn, error, silent, got "verbose"');
    expect((error as ConfigError).message).toContain('PORT: must be a whole number from 0 to 65535, got "eighty"');
    expect((error as ConfigError).message).not.toContain('short-secret');
    expect(ConfigError.EXIT_CODE).toBe(78);
  });

  it('takes an empty variable as unset, and checks the rules that join two variables', () => {
    expect(readConfig({ PORT: '', LOG_LEVEL: '', DATA_DIR: '' })).toMatchObject({ port: 8080, logLevel: 'info', dataDir: path.resolve('./.data') });
    expect(() => readConfig({ VIDEO_STORAGE: 's3' })).toThrow(/S3_BUCKET: must be set when VIDEO_STORAGE=s3/);
    expect(() => readConfig({ GATEWAY_BOOTSTRAP_KEY: `sk-umg-${'a'.repeat(40)}`, GATEWAY_BOOTSTRAP_PLAN: 'gold' })).toThrow(/GATEWAY_BOOTSTRAP_PLAN: "gold" is not a plan/);
    expect(() => readConfig({ GATEWAY_DEMO: 'no' })).toThrow(/GATEWAY_DEMO: must be true, false, 1 or 0/);
    expect(readConfig({ GATEWAY_DEMO: '0', S3_FORCE_PATH_STYLE: 'true', METRICS_PORT: '0' })).toMatchObject({ createDemoAccount: false, videos: { s3: { forcePathStyle: true } }, observability: { metricsPort: 0 } });
  });

  it('gives every variable a default and a meaning, and README.md carries the tables generated from it', () => {
    for (const [name, variable] of Object.entries(ENVIRONMENT_VARIABLES)) {
      expect(variable.shown, name).not.toBe('');
      expect(variable.meaning.length, name).toBeGreaterThan(3);
    }
    const readme = readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(withReadmeTables(readme), 'README.md is out of date: run npm run config -- --readme --write').toBe(readme);
    for (const name of Object.keys(ENVIRONMENT_VARIABLES)) expect(readme).toContain(`| \`${name}\` |`);
  });
});

import { describe, expect, it } from 'vitest';
import { REDACTED, createLogger, type LogLevel } from './logger.js';

const PROVIDER_KEY = 'prov-secret-7Hq2LmX9vB4nR8sT';
const HEADER_SECRET = 'hdr-value-Zx81Pq0Lw3';

/** A logger writing into an array of parsed lines, plus the raw text. */
function capture(level: LogLevel = 'debug', secrets?: string[]) {
  const raw: string[] = [];
  const log = createLogger(level, (line) => raw.push(line), { secrets });
  const lines = () => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { log, raw, lines };
}

describe('createLogger', () => {
  it('writes one JSON line per entry with an ISO time, the level label, the event and the fields', () => {
    const { log, raw, lines } = capture('info');
    log.info('gateway.started', { url: 'http://127.0.0.1:8080', models: 3, nested: { ok: true } });
    expect(raw).toHaveLength(1);
    expect(raw[0].endsWith('\n')).toBe(true);
    const [line] = lines();
    expect(line).toEqual({ level: 'info', time: expect.any(String), event: 'gateway.started', url: 'http://127.0.0.1:8080', models: 3, nested: { ok: true } });
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
    expect(Object.keys(line)).not.toContain('pid');
  });

  it('filters by level, and silent writes nothing', () => {
    const levels: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
    const written = levels.map((level) => {
      const { log, lines } = capture(level);
      log.debug('d');
      log.info('i');
      log.warn('w');
      log.error('e');
      return lines().map((line) => `${line.level as string}:${line.event as string}`);
    });
    expect(written).toEqual([
      ['debug:d', 'info:i', 'warn:w', 'error:e'],
      ['info:i', 'warn:w', 'error:e'],
      ['warn:w', 'error:e'],
      ['error:e'],
      [],
    ]);
  });

  it('masks fields named like secrets at any depth', () => {
    const { log, lines } = capture();
    log.info('request', {
      authorization: 'Bearer abc',
      headers: { 'x-api-key': 'k1', Cookie: 'c=1', accept: 'json' },
      list: [{ password: 'p', name: 'n' }],
      refreshToken: 't',
    });
    expect(lines()[0]).toMatchObject({
      authorization: REDACTED,
      headers: { 'x-api-key': REDACTED, Cookie: REDACTED, accept: 'json' },
      list: [{ password: REDACTED, name: 'n' }],
      refreshToken: REDACTED,
    });
  });

  it('keeps only the start of API keys found in text', () => {
    const { log, lines } = capture();
    log.warn('auth.failed', { message: 'key sk-umg-abcdefghijklmnopqrstuvwxyz0123456789ABCD is revoked; also sk-proj-1234567890abcdef' });
    expect(lines()[0].message).toBe('key sk-umg-abcd… is revoked; also sk-proj-123…');
  });

  it('never writes a registered secret, wherever it sits', () => {
    const { log, raw, lines } = capture('info', [PROVIDER_KEY]);
    log.addSecrets([HEADER_SECRET, 'short']);
    const rootCause = new Error(`upstream said: invalid key ${PROVIDER_KEY}`);
    const failure = new Error(`request to provider failed (${HEADER_SECRET})`, { cause: { message: `nested ${PROVIDER_KEY}`, inner: new TypeError(`fetch failed ${HEADER_SECRET}`, { cause: rootCause }) } });
    log.error('request.failed', {
      message: `got 401 for ${PROVIDER_KEY}`,
      cause: { message: `wrapped: ${PROVIDER_KEY}`, details: [`a ${HEADER_SECRET} b`, { deeper: [PROVIDER_KEY] }] },
      error: failure,
      errors: [new Error(PROVIDER_KEY), `${PROVIDER_KEY}${PROVIDER_KEY}`],
      map: new Map([['k', PROVIDER_KEY]]),
      [`field-${HEADER_SECRET}`]: 1,
    });
    log.info(`event ${PROVIDER_KEY}`);
    const text = raw.join('');
    expect(text).not.toContain(PROVIDER_KEY);
    expect(text).not.toContain(HEADER_SECRET);
    const [line] = lines();
    expect(line.message).toBe(`got 401 for ${REDACTED}`);
    expect(line.cause).toEqual({ message: `wrapped: ${REDACTED}`, details: [`a ${REDACTED} b`, { deeper: [REDACTED] }] });
    expect(line.error).toEqual({
      type: 'Error',
      message: `request to provider failed (${REDACTED})`,
      cause: {
        message: `nested ${REDACTED}`,
        inner: { type: 'TypeError', message: `fetch failed ${REDACTED}`, cause: { type: 'Error', message: `upstream said: invalid key ${REDACTED}` } },
      },
    });
    expect(line.errors).toEqual([{ type: 'Error', message: REDACTED }, `${REDACTED}${REDACTED}`]);
    // Too short to register: it would mask ordinary words.
    log.info('plain', { note: 'short words stay' });
    expect(lines().at(-1)?.note).toBe('short words stay');
  });

  it('writes error stacks only at debug level, and masks them too', () => {
    const error = new Error(`boom ${PROVIDER_KEY}`);
    const atInfo = capture('info', [PROVIDER_KEY]);
    atInfo.log.error('failed', { error });
    expect(atInfo.lines()[0].error).toEqual({ type: 'Error', message: `boom ${REDACTED}` });
    const atDebug = capture('debug', [PROVIDER_KEY]);
    atDebug.log.error('failed', { error });
    const serialized = atDebug.lines()[0].error as { stack: string };
    expect(serialized.stack).toContain('logger.test.ts');
    expect(atDebug.raw.join('')).not.toContain(PROVIDER_KEY);
  });

  it('logs cycles, deep nesting and odd values without throwing', () => {
    const { log, lines } = capture();
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    const shared = { n: 1 };
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { deep };
    log.info('odd', { cyclic, pair: [shared, shared], deep, big: 10n, when: new Date(0), bytes: new Uint8Array(3), fn: () => 1 });
    const [line] = lines();
    expect(line.cyclic).toEqual({ name: 'a', self: '[circular]' });
    expect(line.pair).toEqual([{ n: 1 }, { n: 1 }]);
    expect(JSON.stringify(line.deep)).toContain('[too deep]');
    expect(line).toMatchObject({ big: '10', when: '1970-01-01T00:00:00.000Z', bytes: '[3 bytes]' });
    expect(line).not.toHaveProperty('fn');
  });
});

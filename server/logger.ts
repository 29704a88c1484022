/**
 * JSON lines on stdout. Fields named like secrets are masked, so a careless
 * call site cannot log a key; messages are never built from request bodies.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const SECRET_FIELD = /authorization|api[-_]?key|token|secret|password|cookie/i;
const KEY_IN_TEXT = /(sk-[A-Za-z0-9_-]{8})[A-Za-z0-9_-]+/g;

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

function scrub(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(KEY_IN_TEXT, '$1…');
  return value;
}

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const threshold = ORDER[level];
  const emit = (entryLevel: LogLevel, event: string, fields?: Record<string, unknown>) => {
    if (ORDER[entryLevel] < threshold) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: entryLevel, event };
    if (fields) {
      for (const [name, value] of Object.entries(fields)) {
        entry[name] = SECRET_FIELD.test(name) ? '[redacted]' : scrub(value);
      }
    }
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (event, fields) => emit('debug', event, fields),
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => emit('error', event, fields),
  };
}

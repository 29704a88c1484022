/**
 * JSON lines through pino: `{"level":"info","time":"<ISO>","event":…,…fields}`.
 *
 * Secrets never reach a line, whichever call site logs them and however deep:
 * every field is walked before pino sees it, and
 * 1. a field whose name looks like a secret (authorization, API key, token,
 *    secret, password, cookie) becomes `[redacted]`, at any depth;
 * 2. every occurrence of a registered secret ({@link Logger.addSecrets}: the
 *    providers' API keys and secret header values) in any string — messages,
 *    error messages and their causes, array items — becomes `[redacted]`;
 * 3. API keys in text (`sk-…`, the gateway's own `sk-umg-…`) keep their first
 *    11 characters and lose the rest, which still tells keys apart in a log.
 * Errors become `{ type, message, code?, cause? }`, with their stack only when
 * the level is `debug`. Messages are never built from request bodies.
 *
 * pino's own `redact` option is not used: it masks given paths, and a secret
 * can sit anywhere (a provider's error message quoting its key, a `cause`).
 */
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** The logger every part of the gateway writes to. */
export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  /**
   * A line whose fields the caller built from known names (none named like a secret) and
   * plain values — strings, numbers, booleans, null, or objects of those one level down — such
   * as the access line: its strings are masked like any other, without the generic walk.
   */
  flat(level: 'debug' | 'info', event: string, fields: Record<string, FlatValue | Record<string, FlatValue>>): void;
  /**
   * Registers secret values (provider API keys, secret header values) to mask
   * wherever they appear in a logged string from now on. Values shorter than
   * {@link MIN_SECRET_LENGTH} are ignored, since they would mask ordinary words.
   */
  addSecrets(values: readonly string[]): void;
}

export type FlatValue = string | number | boolean | null;

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Secrets to mask from the first line on (see {@link Logger.addSecrets}). */
  secrets?: readonly string[];
}

/** Shorter registered secrets are ignored (the catalog keeps only values of at least this length). */
export const MIN_SECRET_LENGTH = 8;
/** What a secret is replaced with. */
export const REDACTED = '[redacted]';
/** Nesting below this depth is logged as a placeholder: a log line is not a dump. */
const MAX_DEPTH = 8;
const SECRET_FIELD = /authorization|api[-_]?key|token|secret|password|cookie/i;
const KEY_IN_TEXT = /(sk-[A-Za-z0-9_-]{8})[A-Za-z0-9_-]+/g;

/** The registered secrets, as one pattern rebuilt when the set changes. */
class SecretSet {
  private readonly values = new Set<string>();
  private pattern: RegExp | null = null;

  add(values: readonly string[]): void {
    let changed = false;
    for (const value of values) {
      if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || this.values.has(value)) continue;
      this.values.add(value);
      changed = true;
    }
    if (!changed) return;
    // Longest first, so that a secret containing another one is masked whole.
    const alternatives = [...this.values].sort((a, b) => b.length - a.length).map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    this.pattern = new RegExp(alternatives.join('|'), 'g');
  }

  mask(text: string): string {
    const masked = this.pattern && text.length >= MIN_SECRET_LENGTH ? text.replace(this.pattern, REDACTED) : text;
    // indexOf first: most strings hold no key, and it costs less than the regex.
    return masked.includes('sk-') ? masked.replace(KEY_IN_TEXT, '$1…') : masked;
  }
}

/** Walks one log entry's fields into plain JSON values with every secret masked. */
class Redactor {
  constructor(
    private readonly secrets: SecretSet,
    private readonly withStacks: boolean,
  ) {}

  fields(fields: Record<string, unknown>): Record<string, unknown> {
    return this.object(fields, 0, [fields]);
  }

  /** `ancestors` holds the objects from the root down to `value`'s parent, to tell cycles. */
  private value(value: unknown, depth: number, ancestors: object[]): unknown {
    switch (typeof value) {
      case 'string':
        return this.secrets.mask(value);
      case 'number':
      case 'boolean':
      case 'undefined':
        return value;
      case 'bigint':
        return value.toString();
      case 'symbol':
      case 'function':
        return undefined;
    }
    if (value === null) return null;
    const object = value as object;
    if (depth >= MAX_DEPTH) return '[too deep]';
    if (ancestors.includes(object)) return '[circular]';
    ancestors.push(object);
    try {
      if (object instanceof Error) return this.error(object, depth, ancestors);
      if (Array.isArray(object)) return object.map((item) => this.value(item, depth + 1, ancestors));
      if (ArrayBuffer.isView(object)) return `[${object.byteLength} bytes]`;
      if (typeof (object as { toJSON?: unknown }).toJSON === 'function') {
        // Dates, URLs and classes that say how they serialise.
        return this.value((object as { toJSON: () => unknown }).toJSON(), depth + 1, ancestors);
      }
      if (object instanceof Map) return this.object(Object.fromEntries(object), depth, ancestors);
      if (object instanceof Set) return [...object].map((item) => this.value(item, depth + 1, ancestors));
      return this.object(object as Record<string, unknown>, depth, ancestors);
    } finally {
      // Only the path from the root counts: the same object twice side by side is no cycle.
      ancestors.pop();
    }
  }

  private object(object: Record<string, unknown>, depth: number, ancestors: object[]): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    for (const name of Object.keys(object)) {
      result[this.secrets.mask(name)] = SECRET_FIELD.test(name) ? REDACTED : this.value(object[name], depth + 1, ancestors);
    }
    return result;
  }

  private error(error: Error, depth: number, ancestors: object[]): Record<string, unknown> {
    const serialized: Record<string, unknown> = { type: error.name, message: this.secrets.mask(String(error.message)) };
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' || typeof code === 'number') serialized.code = code;
    if (this.withStacks && typeof error.stack === 'string') serialized.stack = this.secrets.mask(error.stack);
    if (error.cause !== undefined) serialized.cause = this.value(error.cause, depth + 1, ancestors);
    if (error instanceof AggregateError) serialized.errors = this.value(error.errors, depth + 1, ancestors);
    return serialized;
  }
}

let stdoutDestination: DestinationStream | undefined;

/**
 * Standard output, written asynchronously (a request does not wait on a write(2) for its
 * access line); what is still buffered is written synchronously when the process exits.
 */
function stdout(): DestinationStream {
  if (stdoutDestination) return stdoutDestination;
  const destination = pino.destination({ dest: 1, sync: false });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // A closed stdout: nothing more can be written.
    }
  });
  stdoutDestination = destination;
  return destination;
}

/**
 * A logger at `level` that writes each line to `write` (stdout by default).
 * `LOG_LEVEL=silent` writes nothing.
 */
export function createLogger(level: LogLevel, write?: (line: string) => void, options: LoggerOptions = {}): Logger {
  const secrets = new SecretSet();
  if (options.secrets) secrets.add(options.secrets);
  const redactor = new Redactor(secrets, level === 'debug');
  const destination: DestinationStream = write ? { write } : stdout();
  const logger: PinoLogger = pino(
    {
      level,
      // No pid or hostname on every line: the process is known from where the logs are collected.
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  const emit = (entryLevel: Exclude<LogLevel, 'silent'>, event: string, fields?: Record<string, unknown>) => {
    // Filtered lines cost no walk.
    if (!logger.isLevelEnabled(entryLevel)) return;
    logger[entryLevel](fields ? { event: secrets.mask(event), ...redactor.fields(fields) } : { event: secrets.mask(event) });
  };
  const maskFlat = (value: FlatValue): FlatValue => (typeof value === 'string' ? secrets.mask(value) : value);
  const flat: Logger['flat'] = (entryLevel, event, fields) => {
    if (!logger.isLevelEnabled(entryLevel)) return;
    const line: Record<string, unknown> = { event };
    for (const name in fields) {
      const value = fields[name]!;
      if (value === null || typeof value !== 'object') {
        line[name] = maskFlat(value);
        continue;
      }
      const nested: Record<string, FlatValue> = {};
      for (const inner in value) nested[inner] = maskFlat(value[inner]!);
      line[name] = nested;
    }
    logger[entryLevel](line);
  };
  return {
    flat,
    debug: (event, fields) => emit('debug', event, fields),
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => emit('error', event, fields),
    addSecrets: (values) => secrets.add(values),
  };
}

/**
 * The bench's own streaming client, run in its own process (pinned beside the load generator).
 *
 * --mode ttfb: `--warmup` unrecorded then `--count` streamed requests, `--concurrency` at a time,
 *   timing the first body byte (which wrk cannot); prints `RESULT {json}`.
 * --mode hold: opens `--count` streams at once and keeps them open until the upstream ends them;
 *   prints `PROGRESS {json}` (streams open now) every 250 ms, `OPEN {json}` when all are open (or
 *   when `--open-timeout-ms` passes) and `RESULT {json}` at the end.
 *
 * Both are bounded by `--time-limit-ms`. Sends to 127.0.0.1 only.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { assertLoopback, timedRequest, type TimedResponse } from './lib/http.js';
import { distribution } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    headers: { type: 'string', default: '{}' },
    'body-file': { type: 'string' },
    mode: { type: 'string', default: 'ttfb' },
    count: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '0' },
    'time-limit-ms': { type: 'string', default: '30000' },
    'open-timeout-ms': { type: 'string', default: '30000' },
    'request-timeout-ms': { type: 'string', default: '30000' },
  },
});
if (!values.url || !values['body-file']) throw new Error('--url and --body-file are required');
const url = values.url;
assertLoopback(url);
const headers = JSON.parse(values.headers) as Record<string, string>;
const body = readFileSync(values['body-file']);
const count = Math.max(1, Number(values.count));
const timeLimitMs = Number(values['time-limit-ms']);
const requestTimeoutMs = Number(values['request-timeout-ms']);
const deadline = Date.now() + timeLimitMs;

/** A streamed answer is good when it is a 200 event stream ending with [DONE]. */
function problem(response: TimedResponse): string | undefined {
  if (response.status !== 200) return `status ${response.status}: ${response.head.slice(0, 300)}`;
  if (!response.contentType.includes('text/event-stream')) return `content-type ${response.contentType}: ${response.head.slice(0, 300)}`;
  if (!response.end.includes('[DONE]')) return `stream did not end with [DONE]: …${response.end.slice(-200)}`;
  return undefined;
}

function emit(tag: string, value: unknown): void {
  process.stdout.write(`${tag} ${JSON.stringify(value)}\n`);
}

async function ttfb(): Promise<void> {
  const concurrency = Math.max(1, Math.min(count, Number(values.concurrency)));
  const warmup = Math.max(0, Number(values.warmup));
  const planned = warmup + count;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const firstByte: number[] = [];
  const firstEvent: number[] = [];
  const total: number[] = [];
  let started = 0;
  let errors = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (started < planned && Date.now() < deadline) {
      const recorded = started >= warmup;
      started++;
      try {
        const response = await timedRequest({ url, headers, body, agent, timeoutMs: Math.min(requestTimeoutMs, Math.max(1000, deadline - Date.now())) });
        const issue = problem(response);
        if (issue) {
          errors++;
          firstError ??= issue;
          continue;
        }
        if (!recorded) continue;
        firstByte.push(response.firstByteMs);
        firstEvent.push(response.firstEventMs);
        total.push(response.totalMs);
      } catch (error) {
        errors++;
        firstError ??= (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  emit('RESULT', {
    requested: count,
    done: total.length,
    errors,
    firstError,
    firstByteMs: distribution(firstByte),
    firstEventMs: distribution(firstEvent),
    totalMs: distribution(total),
  });
}

async function hold(): Promise<void> {
  const openTimeoutMs = Number(values['open-timeout-ms']);
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const began = Date.now();
  let open = 0;
  let maxOpen = 0;
  let announced = false;
  let errors = 0;
  let firstError: string | undefined;
  let completed = 0;
  const announce = () => {
    if (announced) return;
    announced = true;
    clearTimeout(openTimer);
    emit('OPEN', { open, wanted: count, ms: Date.now() - began });
  };
  const openTimer = setTimeout(announce, openTimeoutMs);
  const progress = setInterval(() => emit('PROGRESS', { open, ms: Date.now() - began }), 250);
  const one = async () => {
    let counted = false;
    try {
      const response = await timedRequest({
        url,
        headers,
        body,
        agent,
        timeoutMs: Math.max(1000, deadline - Date.now()),
        onFirstByte: () => {
          counted = true;
          open++;
          maxOpen = Math.max(maxOpen, open);
          if (open >= count) announce();
        },
      });
      const issue = problem(response);
      if (issue) {
        errors++;
        firstError ??= issue;
      } else completed++;
    } catch (error) {
      errors++;
      firstError ??= (error as Error).message;
    } finally {
      if (counted) open--;
    }
  };
  await Promise.all(Array.from({ length: count }, one));
  clearInterval(progress);
  announce();
  agent.destroy();
  emit('RESULT', { wanted: count, maxOpen, completed, errors, firstError, ms: Date.now() - began });
}

const hardStop = setTimeout(() => {
  emit('RESULT', { error: `time limit of ${timeLimitMs} ms reached` });
  process.exit(2);
}, timeLimitMs + 5000);
hardStop.unref();

(values.mode === 'hold' ? hold() : ttfb())
  .then(() => process.exit(0))
  .catch((error: Error) => {
    emit('RESULT', { error: error.message });
    process.exit(1);
  });

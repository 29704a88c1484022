/**
 * Micro-benchmark of the gateway's SSE decoder, server/sse/sse-parser.ts (on
 * `eventsource-parser`), against the character-loop parser it replaced
 * (bench/lib/character-loop-sse-parser.ts), on a realistic OpenAI chat stream.
 *
 *   npx tsx bench/sse-parser.bench.ts [--rounds 9] [--streams 300]
 *
 * Both take bytes: `eventsource-parser` takes strings, so `SseParser` feeds it
 * through a `TextDecoder` with `stream: true` (a network chunk may end inside a
 * UTF-8 sequence), and that decoding is part of the measured cost, as it is of
 * the character loop's.
 * Each figure is the median over the rounds (the two parsers alternate which
 * one runs first in a round); "B/frame" is the V8 heap growth while one stream
 * is parsed right after a forced GC, a proxy for what each frame allocates.
 * Before measuring, both are checked to give the same events on tricky input
 * (CRLF, CR only, UTF-8 split at every byte, comments, multi-line data, …).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseArgs } from 'node:util';
import { SseParser, type SseEvent } from '../server/sse/sse-parser.js';
import { CharacterLoopSseParser } from './lib/character-loop-sse-parser.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '9' },
    streams: { type: 'string', default: '300' },
  },
});
const ROUNDS = Number(values.rounds);
const STREAMS = Number(values.streams);

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** The `SseParser` API, which both parsers are driven through. */
interface ByteSseParser {
  push(chunk: Uint8Array): SseEvent[];
  end(): SseEvent[];
}

const BEFORE = 'character loop (before)';
const NOW = 'SseParser on eventsource-parser';
const PARSERS: Record<string, () => ByteSseParser> = {
  [BEFORE]: () => new CharacterLoopSseParser(),
  [NOW]: () => new SseParser(),
};

/** 200 frames as OpenAI sends a chat completion: role, content deltas, finish, usage, `[DONE]`. */
function buildOpenAiStream(): string {
  const words = ['The', ' gateway', ' forwards', ' each', ' chunk', ' as', ' soon', ' as', ' it', ' arrives', ',', ' café', ' ☕', ' 東京', ' 😀', '.\n'];
  const head = { id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', object: 'chat.completion.chunk', created: 1741569952, model: 'gpt-4o-2024-08-06', service_tier: 'default', system_fingerprint: 'fp_eb9dce56a8' };
  const frames: string[] = [];
  const frame = (choice: unknown, extra: Record<string, unknown> = {}) => frames.push(`data: ${JSON.stringify({ ...head, choices: choice === undefined ? [] : [choice], ...extra })}\n\n`);
  frame({ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null });
  for (let i = 0; i < 196; i++) frame({ index: 0, delta: { content: words[i % words.length] }, logprobs: null, finish_reason: null });
  frame({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
  frame(undefined, { usage: { prompt_tokens: 19, completion_tokens: 196, total_tokens: 215, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 } } });
  frames.push('data: [DONE]\n\n');
  return frames.join('');
}

function splitEvery(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.subarray(start, start + size));
  return chunks;
}

function splitFrames(text: string): Uint8Array[] {
  const encoder = new TextEncoder();
  return text.split(/(?<=\n\n)/).map((frame) => encoder.encode(frame));
}

function parseAll(makeParser: () => ByteSseParser, chunks: readonly Uint8Array[]): SseEvent[] {
  const parser = makeParser();
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  events.push(...parser.end());
  return events;
}

// --- Same events on tricky input ------------------------------------------------------------

const TRICKY: Record<string, string> = {
  'LF, named events (Anthropic)': 'event: message_start\ndata: {"type":"message_start"}\n\nevent: ping\ndata: {"type": "ping"}\n\n',
  CRLF: 'event: a\r\ndata: one\r\n\r\ndata: two\r\ndata: lines\r\n\r\n',
  'CR only': 'event: a\rdata: one\r\rdata: two\rdata: lines\r\r',
  'mixed line ends': 'data: a\r\n\ndata: b\n\r\ndata: c\r\r\n',
  'UTF-8 of 2, 3 and 4 bytes': 'data: {"t":"café ☕ 東京 😀 Ω"}\n\ndata: 𝄞𝄞\n\n',
  'comments, id, retry, unknown fields': ': keep-alive\n\nid: 7\nretry: 1000\nfoo: bar\ndata: x\n\n:comment\ndata: y\n\n',
  'colon and space handling': 'data:no-space\n\ndata:  two spaces\n\ndata\n\ndata:\n\n',
  'multi-line data': 'data: first\ndata: second\ndata:\ndata: fourth\n\n',
  'byte order mark': '\uFEFFdata: after bom\n\n',
  'unterminated last frame': 'data: one\n\ndata: two',
  'unterminated, ends on CR': 'data: one\r\rdata: two\r',
};

/** Inputs where the two differ (see server/sse/sse-parser.ts), reported rather than required equal. */
const KNOWN_DIFFERENT: Record<string, string> = {
  // The WHATWG rules dispatch nothing when the data buffer is empty; the SDKs and the character loop dispatch a frame that had any field.
  'event without data': 'event: ping\n\ndata: x\n\n',
  // eventsource-parser turns an empty event name into undefined; the character loop keeps ''.
  'empty event name': 'event:\ndata: x\n\n',
};

function describeEvents(events: readonly SseEvent[]): string {
  return JSON.stringify(events.map((event) => [event.event ?? null, event.data]));
}

/** Every split into two chunks, and one byte at a time: the first disagreement, or null. */
function compareOnSplits(text: string): string | null {
  const bytes = new TextEncoder().encode(text);
  const splits: Uint8Array[][] = [[bytes], splitEvery(bytes, 1)];
  for (let cut = 1; cut < bytes.length; cut++) splits.push([bytes.subarray(0, cut), bytes.subarray(cut)]);
  for (const chunks of splits) {
    const before = describeEvents(parseAll(PARSERS[BEFORE], chunks));
    const now = describeEvents(parseAll(PARSERS[NOW], chunks));
    if (before !== now) return `chunks of ${chunks.map((chunk) => chunk.length).join('+')} bytes: character loop ${before}, eventsource-parser ${now}`;
  }
  return null;
}

console.log('Same events on tricky input (every 2-chunk split and 1 byte at a time):');
let mismatches = 0;
for (const [name, text] of Object.entries(TRICKY)) {
  const difference = compareOnSplits(text);
  if (difference) mismatches++;
  console.log(`  ${difference ? 'DIFFERENT' : 'same     '}  ${name}${difference ? `: ${difference}` : ''}`);
}
for (const [name, text] of Object.entries(KNOWN_DIFFERENT)) {
  const difference = compareOnSplits(text);
  console.log(`  ${difference ? 'differs  ' : 'same     '}  ${name} (known)${difference ? `: ${difference}` : ''}`);
}
const stream = buildOpenAiStream();
const streamDifference = compareOnSplits(stream.slice(0, 3000));
if (streamDifference) mismatches++;
console.log(`  ${streamDifference ? 'DIFFERENT' : 'same     '}  start of the OpenAI stream${streamDifference ? `: ${streamDifference}` : ''}`);

// --- Speed and allocation -------------------------------------------------------------------

const streamBytes = new TextEncoder().encode(stream);
const CHUNKINGS: Record<string, Uint8Array[]> = {
  'one frame per chunk': splitFrames(stream),
  '1 KiB chunks': splitEvery(streamBytes, 1024),
  '16 KiB chunks': splitEvery(streamBytes, 16 * 1024),
};
const FRAMES = parseAll(PARSERS[BEFORE], CHUNKINGS['1 KiB chunks']).length;

/** Parses the stream `count` times; returns the events seen, so the work cannot be skipped. */
function parseStreams(makeParser: () => ByteSseParser, chunks: readonly Uint8Array[], count: number): number {
  let seen = 0;
  for (let i = 0; i < count; i++) {
    const parser = makeParser();
    for (const chunk of chunks) seen += parser.push(chunk).length;
    seen += parser.end().length;
  }
  return seen;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Heap growth while one stream is parsed, right after a GC; median of many, as a GC inside a sample makes it wrong. */
function bytesPerFrame(makeParser: () => ByteSseParser, chunks: readonly Uint8Array[]): number {
  const samples: number[] = [];
  for (let i = 0; i < 31; i++) {
    collectGarbage();
    const before = process.memoryUsage().heapUsed;
    parseStreams(makeParser, chunks, 1);
    samples.push((process.memoryUsage().heapUsed - before) / FRAMES);
  }
  return median(samples);
}

console.log(`\n${FRAMES} frames per stream (${streamBytes.length} bytes), ${STREAMS} streams per round, ${ROUNDS} rounds; median ns/frame (min):`);
const rows: string[][] = [];
for (const [chunkingName, chunks] of Object.entries(CHUNKINGS)) {
  const names = Object.keys(PARSERS);
  for (const name of names) parseStreams(PARSERS[name], chunks, Math.max(20, STREAMS / 5));
  const times: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const started = process.hrtime.bigint();
      const seen = parseStreams(PARSERS[name], chunks, STREAMS);
      const elapsed = Number(process.hrtime.bigint() - started);
      if (seen !== FRAMES * STREAMS) throw new Error(`${name} saw ${seen} events, expected ${FRAMES * STREAMS}`);
      times[name].push(elapsed / seen);
    }
  }
  const baseline = median(times[BEFORE]);
  for (const name of names) {
    const value = median(times[name]);
    rows.push([chunkingName, name, `${value.toFixed(0)} (${Math.min(...times[name]).toFixed(0)})`, `${((value / baseline) * 100).toFixed(0)}%`, bytesPerFrame(PARSERS[name], chunks).toFixed(0)]);
  }
}
const header = ['chunking', 'parser', 'ns/frame', 'vs before', 'B/frame'];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
for (const row of [header, ...rows]) console.log(`  ${row.map((cell, column) => cell.padEnd(widths[column])).join('  ')}`);
if (mismatches > 0) {
  console.log(`\n${mismatches} input(s) gave different events.`);
  process.exitCode = 1;
}

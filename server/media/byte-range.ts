/**
 * `Range` on a stored file, as RFC 9110 §14 has it, for every download the
 * gateway serves (video content, generated image files):
 *
 * - one satisfiable range → 206 with `content-range`; a suffix longer than the
 *   file is the whole file (`bytes=-500` of 100 bytes → 206 `bytes 0-99/100`),
 *   a last position past the end is cut to the end;
 * - several ranges that overlap or touch are joined into one; ranges that stay
 *   apart would need `multipart/byteranges`, which the gateway does not send:
 *   the header is ignored (200, the whole file), as §14.2 allows;
 * - a malformed header, another unit, or an invalid range (`bytes=5-2`: the
 *   last position before the first) → the header is ignored (200);
 * - well-formed ranges none of which lies in the file (`bytes=100-` of 100
 *   bytes, `bytes=-0`) → 416 with `content-range: bytes *\/size`;
 * - `If-Range` with our strong entity tag → the range is served; with
 *   anything else (another tag, a weak one, a date: the gateway sends no
 *   `last-modified`) → the whole file (§13.1.5);
 * - an empty file → always the whole (empty) file.
 */
import { GatewayError } from '../errors.js';

/** What to answer: the whole file (200), or bytes `start`..`end`, both included (206). */
export type ByteRangeChoice = { kind: 'whole' } | { kind: 'partial'; start: number; end: number };

/** A longer header is not parsed (ignored). */
const MAX_HEADER_LENGTH = 1024;
/** More range specs than this are not looked at (ignored): a list of many small ranges is a known abuse (§14.2). */
const MAX_RANGES = 16;

const DIGITS = /^\d+$/;

type Spec = { first: number; last: number | undefined } | { suffix: number };

/** The range specs of a `bytes=` header; undefined when the header is to be ignored (malformed, other unit, invalid range). */
function parseSpecs(header: string): Spec[] | undefined {
  if (header.length > MAX_HEADER_LENGTH) return undefined;
  const equals = header.indexOf('=');
  if (equals === -1 || header.slice(0, equals).trim().toLowerCase() !== 'bytes') return undefined;
  // A list allows empty elements and whitespace around commas (RFC 9110 §5.6.1).
  const elements = header
    .slice(equals + 1)
    .split(',')
    .map((element) => element.trim())
    .filter((element) => element.length > 0);
  if (elements.length === 0 || elements.length > MAX_RANGES) return undefined;
  const specs: Spec[] = [];
  for (const element of elements) {
    const dash = element.indexOf('-');
    if (dash === -1) return undefined;
    const firstText = element.slice(0, dash);
    const lastText = element.slice(dash + 1);
    if (firstText === '') {
      if (!DIGITS.test(lastText)) return undefined;
      specs.push({ suffix: Number(lastText) });
      continue;
    }
    if (!DIGITS.test(firstText) || (lastText !== '' && !DIGITS.test(lastText))) return undefined;
    const first = Number(firstText);
    const last = lastText === '' ? undefined : Number(lastText);
    // `bytes=5-2` is an invalid range-spec, so the whole ranges-set is invalid (§14.1.1).
    if (last !== undefined && last < first) return undefined;
    specs.push({ first, last });
  }
  return specs;
}

/** The bytes a spec selects in a file of `size` bytes, or undefined when it selects none. */
function resolveSpec(spec: Spec, size: number): { start: number; end: number } | undefined {
  if ('suffix' in spec) return spec.suffix === 0 ? undefined : { start: Math.max(0, size - spec.suffix), end: size - 1 };
  if (spec.first >= size) return undefined;
  return { start: spec.first, end: Math.min(spec.last ?? size - 1, size - 1) };
}

/** Whether `If-Range` lets the range through: only our own strong tag does. */
function ifRangeMatches(ifRange: string | undefined, etag: string | undefined): boolean {
  if (ifRange === undefined) return true;
  const given = ifRange.trim();
  return etag !== undefined && !given.startsWith('W/') && given === etag;
}

/**
 * What to serve of a file of `size` bytes for a request's `range` and
 * `if-range` headers; throws `416 RANGE_NOT_SATISFIABLE` (with
 * `content-range: bytes *\/size`) when no requested range lies in the file.
 */
export function chooseByteRange(size: number, headers: { range?: string; ifRange?: string }, etag?: string): ByteRangeChoice {
  const { range } = headers;
  if (range === undefined || size === 0 || !ifRangeMatches(headers.ifRange, etag)) return { kind: 'whole' };
  const specs = parseSpecs(range);
  if (!specs) return { kind: 'whole' };
  const selected = specs.map((spec) => resolveSpec(spec, size)).filter((bytes) => bytes !== undefined);
  if (selected.length === 0) {
    throw new GatewayError('RANGE_NOT_SATISFIABLE', `The range '${range.slice(0, 100)}' lies outside the file (${size} bytes).`, {
      headers: { 'content-range': `bytes */${size}`, 'accept-ranges': 'bytes' },
    });
  }
  selected.sort((a, b) => a.start - b.start);
  const joined = selected.reduce((first, next) => (next.start <= first.end + 1 ? { start: first.start, end: Math.max(first.end, next.end) } : first));
  // Another range left apart from the first: several parts, which the gateway does not send.
  if (selected.some((bytes) => bytes.start > joined.end + 1)) return { kind: 'whole' };
  return { kind: 'partial', start: joined.start, end: joined.end };
}

/** The headers of a ranged download: `accept-ranges`, the tag, and `content-range` for a part. */
export function byteRangeHeaders(choice: ByteRangeChoice, size: number, etag?: string): Record<string, string> {
  return {
    'accept-ranges': 'bytes',
    ...(etag !== undefined ? { etag } : {}),
    ...(choice.kind === 'partial' ? { 'content-range': `bytes ${choice.start}-${choice.end}/${size}` } : {}),
  };
}

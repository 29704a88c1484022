/**
 * The prompt excerpt kept for staff review of a flagged restricted-family request (SPEC: "a
 * prompt excerpt of up to 400 characters").
 *
 * Rules, in order:
 * - Only the first {@link EXCERPT_SCAN_LIMIT} UTF-16 code units of the text are read, so a
 *   multi-megabyte prompt costs the same as a short one.
 * - Runs of whitespace (any `\s`, including newlines and tabs) become one space, and the result
 *   is trimmed: reviewers read a line, and line breaks would otherwise eat the budget.
 * - Control characters other than whitespace (C0, DEL, C1) are dropped: PostgreSQL `text`
 *   cannot hold NUL, and the others only hide content from a reviewer.
 * - A lone surrogate becomes U+FFFD, so the excerpt is always well-formed UTF-16 and encodes
 *   to valid UTF-8.
 * - "Characters" are Unicode code points, and the excerpt is cut only between grapheme
 *   clusters (`Intl.Segmenter`): an emoji ZWJ sequence, a flag or a letter with its combining
 *   marks is either kept whole or left out. A single cluster longer than the whole budget
 *   therefore ends the excerpt where it starts.
 * - No ellipsis is added; a reviewer sees the stored request size elsewhere.
 */

/** How many UTF-16 code units of the source text are ever read. */
export const EXCERPT_SCAN_LIMIT = 64 * 1024;

/** The default and maximum excerpt length, in code points (SPEC limits). */
export const EXCERPT_MAX_CHARACTERS = 400;

const graphemeSegmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code < 0xa0);
}

function isWhitespace(code: number, character: string): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return /\s/.test(character);
}

/**
 * Collapses whitespace, drops control characters and repairs lone surrogates in the first
 * {@link EXCERPT_SCAN_LIMIT} code units, stopping once `wantedCodePoints` code points (plus one
 * more, to see whether a grapheme continues) have been produced.
 */
function cleanHead(text: string, wantedCodePoints: number): string {
  const end = Math.min(text.length, EXCERPT_SCAN_LIMIT);
  let output = '';
  let produced = 0;
  let pendingSpace = false;
  // The extra code points let the segmenter see a cluster that straddles the budget whole;
  // clusters longer than that are cut by the budget check in excerptOf, never here.
  const stopAfter = wantedCodePoints + 32;
  for (let index = 0; index < end && produced < stopAfter; index++) {
    const code = text.charCodeAt(index);
    let character: string;
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = index + 1 < text.length ? text.charCodeAt(index + 1) : 0;
      if (next >= 0xdc00 && next <= 0xdfff) {
        character = text.slice(index, index + 2);
        index++;
      } else {
        character = '\ufffd';
      }
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      character = '\ufffd';
    } else if (isWhitespace(code, text[index])) {
      pendingSpace = output.length > 0;
      continue;
    } else if (isControl(code)) {
      continue;
    } else {
      character = text[index];
    }
    if (pendingSpace) {
      output += ' ';
      produced++;
      pendingSpace = false;
    }
    output += character;
    produced++;
  }
  return output;
}

/**
 * The review excerpt of a prompt: at most `maxCharacters` code points, cut at a grapheme
 * boundary, whitespace collapsed (see the module comment for every rule).
 */
export function excerptOf(text: string, maxCharacters: number = EXCERPT_MAX_CHARACTERS): string {
  const budget = Math.max(0, Math.floor(maxCharacters));
  if (budget === 0) return '';
  const head = cleanHead(text, budget);
  // Printable ASCII has one code point per grapheme: no segmentation needed.
  if (PRINTABLE_ASCII.test(head)) return head.slice(0, budget).trimEnd();
  let excerpt = '';
  let used = 0;
  for (const { segment } of graphemeSegmenter.segment(head)) {
    let codePoints = 0;
    for (let index = 0; index < segment.length; index++) {
      const code = segment.charCodeAt(index);
      if (code < 0xdc00 || code > 0xdfff) codePoints++;
    }
    if (used + codePoints > budget) break;
    excerpt += segment;
    used += codePoints;
  }
  // The budget can end right after a space that only separated two words.
  return excerpt.trimEnd();
}

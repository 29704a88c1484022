import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.js';
import { byteRangeHeaders, chooseByteRange } from './byte-range.js';

const SIZE = 100;
const TAG = '"img_1"';

function choose(range: string | undefined, ifRange?: string, size = SIZE) {
  return chooseByteRange(size, { range, ifRange }, TAG);
}

function refused(range: string): GatewayError {
  try {
    choose(range);
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error(`${range} was not refused`);
}

describe('chooseByteRange (RFC 9110 §14)', () => {
  it('serves one range, cutting a last position past the end', () => {
    expect(choose('bytes=0-9')).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(choose('bytes=90-')).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(choose('bytes=90-1000')).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(choose('bytes=99-99')).toEqual({ kind: 'partial', start: 99, end: 99 });
    expect(choose('BYTES = 1-2')).toEqual({ kind: 'partial', start: 1, end: 2 });
  });

  it('serves a suffix, and the whole file as a part when the suffix is longer than the file', () => {
    expect(choose('bytes=-10')).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(choose('bytes=-100')).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(choose('bytes=-5000')).toEqual({ kind: 'partial', start: 0, end: 99 });
  });

  it('ignores an invalid range (last before first): the whole file', () => {
    expect(choose('bytes=5-2')).toEqual({ kind: 'whole' });
    expect(choose('bytes=0-1, 5-2')).toEqual({ kind: 'whole' });
  });

  it('ignores a malformed header or another unit', () => {
    for (const header of ['bytes=abc', 'bytes=1-2-3', 'bytes=', 'bytes', 'items=0-1', 'bytes=--1', 'bytes=1.5-2', 'bytes=0x1-2', `bytes=${'0-1,'.repeat(400)}`]) {
      expect(choose(header), header).toEqual({ kind: 'whole' });
    }
  });

  it('joins overlapping and touching ranges; ranges apart (multipart) are ignored', () => {
    expect(choose('bytes=0-4,5-9')).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(choose('bytes=10-20, 0-15')).toEqual({ kind: 'partial', start: 0, end: 20 });
    expect(choose('bytes=0-1,,5-6')).toEqual({ kind: 'whole' });
    expect(choose('bytes=0-1,-5')).toEqual({ kind: 'whole' });
    // An unsatisfiable range among satisfiable ones is dropped.
    expect(choose('bytes=0-4,500-600')).toEqual({ kind: 'partial', start: 0, end: 4 });
    expect(choose(`bytes=${'0-1,'.repeat(17)}`)).toEqual({ kind: 'whole' });
  });

  it('refuses with 416 and content-range */size when no range lies in the file', () => {
    for (const header of ['bytes=100-', 'bytes=100-200', 'bytes=-0', 'bytes=500-600,200-']) {
      const error = refused(header);
      expect(error.code, header).toBe('RANGE_NOT_SATISFIABLE');
      expect(error.status).toBe(416);
      expect(error.headers).toMatchObject({ 'content-range': 'bytes */100' });
    }
  });

  it('serves an empty file whole whatever the range', () => {
    expect(choose('bytes=0-1', undefined, 0)).toEqual({ kind: 'whole' });
    expect(choose('bytes=-1', undefined, 0)).toEqual({ kind: 'whole' });
  });

  it('obeys If-Range: only our strong tag lets the range through', () => {
    expect(choose('bytes=0-9', TAG)).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(choose('bytes=0-9', '"other"')).toEqual({ kind: 'whole' });
    expect(choose('bytes=0-9', `W/${TAG}`)).toEqual({ kind: 'whole' });
    expect(choose('bytes=0-9', 'Wed, 21 Oct 2015 07:28:00 GMT')).toEqual({ kind: 'whole' });
    expect(chooseByteRange(SIZE, { range: 'bytes=0-9', ifRange: TAG })).toEqual({ kind: 'whole' });
  });

  it('answers without a Range header: the whole file', () => {
    expect(choose(undefined)).toEqual({ kind: 'whole' });
    expect(choose(undefined, TAG)).toEqual({ kind: 'whole' });
  });

  it('builds the headers of a part and of the whole file', () => {
    expect(byteRangeHeaders({ kind: 'partial', start: 0, end: 9 }, SIZE, TAG)).toEqual({ 'accept-ranges': 'bytes', etag: TAG, 'content-range': 'bytes 0-9/100' });
    expect(byteRangeHeaders({ kind: 'whole' }, SIZE)).toEqual({ 'accept-ranges': 'bytes' });
  });
});

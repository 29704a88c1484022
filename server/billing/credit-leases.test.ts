import { describe, expect, it } from 'vitest';
import { LeaseBook } from './credit-leases.js';

describe('LeaseBook', () => {
  it('serves holds from headroom until it runs out, never below zero', () => {
    const book = new LeaseBook();
    expect(book.take('a', 10, 0)).toBe(false);
    book.add('a', 25, 0);
    expect(book.take('a', 10, 1)).toBe(true);
    expect(book.take('a', 10, 2)).toBe(true);
    expect(book.take('a', 10, 3)).toBe(false);
    expect(book.free('a')).toBe(5);
    expect(book.take('b', 1, 3)).toBe(false);
  });

  it('hands back idle headroom only, and everything on drain', () => {
    const book = new LeaseBook();
    book.add('idle', 7, 0);
    book.add('busy', 9, 0);
    book.take('busy', 1, 900);
    expect(book.drainIdle(500, 1000)).toEqual([{ accountId: 'idle', amount: 7 }]);
    expect(book.free('idle')).toBe(0);
    expect(book.drain('busy')).toEqual([{ accountId: 'busy', amount: 8 }]);
    expect(book.drain()).toEqual([]);
  });
});

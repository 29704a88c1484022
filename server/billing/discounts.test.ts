import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DISCOUNT_POOL,
  assertDiscountPool,
  discountPercentageFor,
  discountsFor,
  formatTimeRemaining,
  rotationWindow,
  toDiscountResult,
  type DiscountPool,
} from './discounts.js';

const HOUR = 3_600_000;
const at = (iso: string) => new Date(iso);

const POOL: DiscountPool = {
  models: ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'],
  minPercentage: 5,
  maxPercentage: 40,
  perAccount: 3,
  seed: 'test-seed',
};

describe('rotationWindow', () => {
  it('turns at 18:00 CET (17:00 UTC) in winter', () => {
    expect(rotationWindow(at('2026-01-15T16:59:59.999Z'))).toEqual({
      start: at('2026-01-14T17:00:00Z'),
      end: at('2026-01-15T17:00:00Z'),
    });
    expect(rotationWindow(at('2026-01-15T17:00:00Z'))).toEqual({
      start: at('2026-01-15T17:00:00Z'),
      end: at('2026-01-16T17:00:00Z'),
    });
  });

  it('turns at 18:00 CEST (16:00 UTC) in summer', () => {
    expect(rotationWindow(at('2026-07-01T15:59:00Z'))).toEqual({
      start: at('2026-06-30T16:00:00Z'),
      end: at('2026-07-01T16:00:00Z'),
    });
    expect(rotationWindow(at('2026-07-01T16:00:00Z'))).toEqual({
      start: at('2026-07-01T16:00:00Z'),
      end: at('2026-07-02T16:00:00Z'),
    });
  });

  it('is 24 hours on ordinary days, across month and year ends', () => {
    for (const iso of ['2026-01-01T00:00:00Z', '2026-02-28T20:00:00Z', '2026-12-31T17:30:00Z', '2026-08-31T23:00:00Z']) {
      const { start, end } = rotationWindow(at(iso));
      expect(end.getTime() - start.getTime()).toBe(24 * HOUR);
      expect(start.getTime()).toBeLessThanOrEqual(at(iso).getTime());
      expect(end.getTime()).toBeGreaterThan(at(iso).getTime());
    }
    expect(rotationWindow(at('2026-12-31T17:30:00Z'))).toEqual({
      start: at('2026-12-31T17:00:00Z'),
      end: at('2027-01-01T17:00:00Z'),
    });
  });

  it('is 23 hours across the spring change (29 March 2026)', () => {
    const expected = { start: at('2026-03-28T17:00:00Z'), end: at('2026-03-29T16:00:00Z') };
    // Before the change (01:30 CET), inside the skipped hour's neighbourhood (03:30 CEST) and just before the turn.
    for (const iso of ['2026-03-28T17:00:00Z', '2026-03-29T00:30:00Z', '2026-03-29T01:30:00Z', '2026-03-29T15:59:59Z']) {
      expect(rotationWindow(at(iso))).toEqual(expected);
    }
    expect(expected.end.getTime() - expected.start.getTime()).toBe(23 * HOUR);
    expect(rotationWindow(at('2026-03-29T16:00:00Z'))).toEqual({
      start: at('2026-03-29T16:00:00Z'),
      end: at('2026-03-30T16:00:00Z'),
    });
  });

  it('is 25 hours across the autumn change (25 October 2026)', () => {
    const expected = { start: at('2026-10-24T16:00:00Z'), end: at('2026-10-25T17:00:00Z') };
    // 00:30 and 01:30 UTC are both 02:30 on Berlin clocks (the repeated hour).
    for (const iso of ['2026-10-24T16:00:00Z', '2026-10-25T00:30:00Z', '2026-10-25T01:30:00Z', '2026-10-25T16:59:59Z']) {
      expect(rotationWindow(at(iso))).toEqual(expected);
    }
    expect(expected.end.getTime() - expected.start.getTime()).toBe(25 * HOUR);
    expect(rotationWindow(at('2026-10-25T17:00:00Z'))).toEqual({
      start: at('2026-10-25T17:00:00Z'),
      end: at('2026-10-26T17:00:00Z'),
    });
    // The window before the change is still 24 hours (16:00 UTC to 16:00 UTC).
    expect(rotationWindow(at('2026-10-24T15:59:59Z'))).toEqual({
      start: at('2026-10-23T16:00:00Z'),
      end: at('2026-10-24T16:00:00Z'),
    });
  });

  it('rejects an invalid date', () => {
    expect(() => rotationWindow(new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('discountsFor', () => {
  const now = at('2026-11-22T10:00:00Z');

  it('gives the same discounts for the same inputs', () => {
    const first = discountsFor('account-1', POOL, now);
    expect(discountsFor('account-1', POOL, now)).toEqual(first);
    // Any instant of the same window, and any order of the pool, gives the same picks.
    expect(discountsFor('account-1', POOL, at('2026-11-21T17:00:00Z'))).toEqual(first);
    expect(discountsFor('account-1', { ...POOL, models: [...POOL.models].reverse() }, now)).toEqual(first);
  });

  it('picks perAccount distinct models of the pool with percentages in range, expiring at the window end', () => {
    const { end } = rotationWindow(now);
    for (let account = 0; account < 200; account++) {
      const discounts = discountsFor(`account-${account}`, POOL, now);
      expect(discounts).toHaveLength(3);
      expect(new Set(discounts.map((discount) => discount.model)).size).toBe(3);
      for (const discount of discounts) {
        expect(POOL.models).toContain(discount.model);
        expect(Number.isInteger(discount.percentage)).toBe(true);
        expect(discount.percentage).toBeGreaterThanOrEqual(5);
        expect(discount.percentage).toBeLessThanOrEqual(40);
        expect(discount.expiresAt).toEqual(end);
      }
    }
  });

  it('spreads picks and percentages over accounts', () => {
    const modelCounts = new Map<string, number>();
    const percentages = new Set<number>();
    const combinations = new Set<string>();
    const accounts = 2000;
    for (let account = 0; account < accounts; account++) {
      const discounts = discountsFor(`acct_${account}`, POOL, now);
      combinations.add(discounts.map((discount) => discount.model).join(','));
      for (const discount of discounts) {
        modelCounts.set(discount.model, (modelCounts.get(discount.model) ?? 0) + 1);
        percentages.add(discount.percentage);
      }
    }
    // Each of 8 models is expected 2000 * 3 / 8 = 750 times.
    for (const model of POOL.models) {
      expect(modelCounts.get(model)).toBeGreaterThan(600);
      expect(modelCounts.get(model)).toBeLessThan(900);
    }
    expect(percentages).toEqual(new Set(Array.from({ length: 36 }, (_, index) => 5 + index)));
    // C(8, 3) = 56 possible sets; 2000 accounts should see nearly all.
    expect(combinations.size).toBeGreaterThan(50);
  });

  it('changes picks from one day to the next', () => {
    let changed = 0;
    const accounts = 500;
    for (let account = 0; account < accounts; account++) {
      const today = discountsFor(`account-${account}`, POOL, at('2026-11-22T10:00:00Z'));
      const tomorrow = discountsFor(`account-${account}`, POOL, at('2026-11-23T10:00:00Z'));
      const picks = (discounts: typeof today) => discounts.map((discount) => `${discount.model}=${discount.percentage}`).join(',');
      if (picks(today) !== picks(tomorrow)) changed += 1;
    }
    // Same models and same percentages two days running is rare (well under 1%).
    expect(changed).toBeGreaterThan(accounts * 0.95);
  });

  it('depends on the seed', () => {
    const accounts = Array.from({ length: 100 }, (_, index) => `account-${index}`);
    const picks = (seed: string) => accounts.map((account) => JSON.stringify(discountsFor(account, { ...POOL, seed }, now))).join(';');
    expect(picks('one')).not.toBe(picks('two'));
  });

  it('gives nothing for an empty pool or perAccount 0, and caps perAccount at the pool size', () => {
    expect(discountsFor('account-1', DEFAULT_DISCOUNT_POOL, now)).toEqual([]);
    expect(discountsFor('account-1', { ...POOL, perAccount: 0 }, now)).toEqual([]);
    const all = discountsFor('account-1', { ...POOL, perAccount: 50 }, now);
    expect(all.map((discount) => discount.model)).toEqual([...POOL.models].sort());
  });

  it('gives one fixed percentage when min equals max', () => {
    const discounts = discountsFor('account-1', { ...POOL, minPercentage: 25, maxPercentage: 25 }, now);
    expect(discounts.map((discount) => discount.percentage)).toEqual([25, 25, 25]);
  });

  it('rejects an invalid pool', () => {
    expect(() => discountsFor('account-1', { ...POOL, minPercentage: 0 }, now)).toThrow(RangeError);
    expect(() => discountsFor('account-1', { ...POOL, maxPercentage: 101 }, now)).toThrow(RangeError);
    expect(() => discountsFor('account-1', { ...POOL, minPercentage: 50, maxPercentage: 40 }, now)).toThrow(RangeError);
    expect(() => discountsFor('account-1', { ...POOL, minPercentage: 2.5 }, now)).toThrow(RangeError);
    expect(() => assertDiscountPool({ ...POOL, perAccount: -1 })).toThrow(RangeError);
    expect(() => assertDiscountPool(POOL)).not.toThrow();
  });
});

describe('discountPercentageFor', () => {
  const now = at('2026-11-22T10:00:00Z');

  it('returns the discount of a picked model and 0 for the others', () => {
    const discounts = discountsFor('account-7', POOL, now);
    for (const model of POOL.models) {
      const expected = discounts.find((discount) => discount.model === model)?.percentage ?? 0;
      expect(discountPercentageFor('account-7', model, POOL, now)).toBe(expected);
    }
    expect(discountPercentageFor('account-7', 'not-in-pool', POOL, now)).toBe(0);
    expect(discountPercentageFor('account-7', 'alpha', DEFAULT_DISCOUNT_POOL, now)).toBe(0);
  });
});

describe('formatTimeRemaining', () => {
  it.each([
    [(5 * 3600 + 12 * 60 + 40) * 1000, '5h 12m'],
    [25 * HOUR, '25h 0m'],
    [(12 * 60 + 3) * 1000, '12m 3s'],
    [60_000, '1m 0s'],
    [45_000, '45s'],
    [45_999, '45s'],
    [999, '0s'],
    [0, '0s'],
    [-5_000, '0s'],
  ])('%d ms → %s', (ms, expected) => {
    expect(formatTimeRemaining(ms)).toBe(expected);
  });
});

describe('toDiscountResult', () => {
  it('has the SPEC shape, with expires_at and next_rotation at the window end', () => {
    const now = at('2026-11-22T10:00:00Z');
    const result = toDiscountResult('account-1', POOL, now);
    const end = Date.UTC(2026, 10, 22, 17) / 1000;
    expect(result.next_rotation).toBe(end);
    expect(result.discounts).toHaveLength(3);
    expect(result.discounts).toEqual(
      discountsFor('account-1', POOL, now).map((discount) => ({
        model: discount.model,
        percentage: discount.percentage,
        expires_at: end,
        time_remaining: '7h 0m',
      })),
    );
    for (const discount of result.discounts) expect(Object.keys(discount).sort()).toEqual(['expires_at', 'model', 'percentage', 'time_remaining']);
  });

  it('matches next_rotation to the window end across a daylight-saving change', () => {
    const now = at('2026-10-25T01:30:00Z');
    expect(toDiscountResult('account-1', POOL, now).next_rotation).toBe(rotationWindow(now).end.getTime() / 1000);
    expect(toDiscountResult('account-1', POOL, now).discounts[0].time_remaining).toBe('15h 30m');
  });

  it('is an empty list with next_rotation for an empty pool', () => {
    const now = at('2026-07-01T12:00:00Z');
    expect(toDiscountResult('account-1', DEFAULT_DISCOUNT_POOL, now)).toEqual({
      discounts: [],
      next_rotation: Date.UTC(2026, 6, 1, 16) / 1000,
    });
  });
});

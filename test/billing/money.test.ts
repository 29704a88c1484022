/**
 * Money arithmetic of server/billing/money.ts: integer micro-credits from the
 * catalog on, costs rounded up exactly once, discounts rounded in the
 * account's disfavour by at most one micro-credit, and no floating-point drift
 * however many charges add up.
 */
import { describe, expect, it } from 'vitest';
import { applyDiscount, computeCost, creditsToMicro, microToCredits, type MicroPrice } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';

/** A price list in micro-credits with everything else zero. */
function price(fields: Partial<MicroPrice>): MicroPrice {
  return { inputPerMillion: 0, outputPerMillion: 0, cachedInputPerMillion: 0, image: 0, second: 0, character: 0, request: 0, ...fields };
}

describe('creditsToMicro', () => {
  it('converts decimal credits with up to 6 decimals exactly', () => {
    expect(creditsToMicro(0)).toBe(0);
    expect(creditsToMicro(1)).toBe(1_000_000);
    expect(creditsToMicro(0.000001)).toBe(1);
    expect(creditsToMicro(0.01)).toBe(10_000);
    expect(creditsToMicro(12.345678)).toBe(12_345_678);
    expect(creditsToMicro(999_999.999999)).toBe(999_999_999_999);
    expect(creditsToMicro(-2.5)).toBe(-2_500_000);
  });

  it('tolerates binary floating-point noise of amounts computed in JavaScript', () => {
    expect(creditsToMicro(0.1 + 0.2)).toBe(300_000);
    expect(creditsToMicro(3 * 0.1)).toBe(300_000);
    expect(creditsToMicro(37 * 0.01)).toBe(370_000);
    expect(creditsToMicro(1.1 * 1.1)).toBe(1_210_000);
  });

  it('refuses a seventh decimal, whatever the size of the amount', () => {
    for (const credits of [0.0000001, 0.0000005, 0.1234567, 1.0000001, 5.0000004, 100.1234567, 1_000_000.0000005, -1.0000001]) {
      expect(() => creditsToMicro(credits), String(credits)).toThrow(RangeError);
      expect(() => creditsToMicro(credits)).toThrow(/more than 6 decimals/);
    }
  });

  it('refuses amounts that are not finite or too large to be exact', () => {
    for (const credits of [Number.NaN, Number.POSITIVE_INFINITY, 1e12]) expect(() => creditsToMicro(credits), String(credits)).toThrow(RangeError);
  });

  it('round-trips through microToCredits for display', () => {
    for (const micro of [0, 1, 7, 10_000, 123_456_789, 999_999_999_999]) expect(creditsToMicro(microToCredits(micro))).toBe(micro);
    expect(microToCredits(1)).toBe(0.000001);
    expect(microToCredits(123_456_789)).toBe(123.456789);
  });
});

describe('toMicroPrice', () => {
  it('takes the catalog prices in credits to micro-credits, cached input defaulting to input', () => {
    expect(toMicroPrice({ input: 3, output: 15 })).toEqual(price({ inputPerMillion: 3_000_000, outputPerMillion: 15_000_000, cachedInputPerMillion: 3_000_000 }));
    expect(toMicroPrice({ input: 2.5, output: 10, cachedInput: 1.25, image: 0.04, second: 0.0001, character: 0.000015, request: 0.01 })).toEqual({
      inputPerMillion: 2_500_000,
      outputPerMillion: 10_000_000,
      cachedInputPerMillion: 1_250_000,
      image: 40_000,
      second: 100,
      character: 15,
      request: 10_000,
    });
  });

  it('refuses a catalog price finer than one micro-credit', () => {
    expect(() => toMicroPrice({ input: 0, output: 0, request: 0.0000001 })).toThrow(RangeError);
  });
});

describe('computeCost', () => {
  it('multiplies tokens by the price per million', () => {
    const list = price({ inputPerMillion: 3_000_000, outputPerMillion: 15_000_000 });
    expect(computeCost(list, { inputTokens: 1_000_000, outputTokens: 0 })).toBe(3_000_000);
    expect(computeCost(list, { inputTokens: 1_000, outputTokens: 500 })).toBe(3_000 + 7_500);
    expect(computeCost(list, { inputTokens: 0, outputTokens: 0 })).toBe(0);
  });

  it('rounds up, so a request never costs less than what it used', () => {
    // 0.5 µc per token.
    const half = price({ inputPerMillion: 500_000, outputPerMillion: 500_000 });
    expect(computeCost(half, { inputTokens: 1, outputTokens: 0 })).toBe(1);
    expect(computeCost(half, { inputTokens: 3, outputTokens: 0 })).toBe(2);
    // 0.15 µc per token: 7 tokens are 1.05 µc.
    expect(computeCost(price({ inputPerMillion: 150_000 }), { inputTokens: 7, outputTokens: 0 })).toBe(2);
  });

  it('rounds once, on the sum of the parts, not once per part', () => {
    const half = price({ inputPerMillion: 500_000, outputPerMillion: 500_000, cachedInputPerMillion: 500_000 });
    // 0.5 + 0.5 = 1 µc exactly; rounding each part would say 2.
    expect(computeCost(half, { inputTokens: 1, outputTokens: 1 })).toBe(1);
    // 1 cached (0.5) + 1 input (0.5) + 1 output (0.5) = 1.5 → 2, not 3.
    expect(computeCost(half, { inputTokens: 2, cachedInputTokens: 1, outputTokens: 1 })).toBe(2);
    // Half a millisecond-priced second part and half a token part make one micro-credit.
    expect(computeCost(price({ inputPerMillion: 500_000, second: 500 }), { inputTokens: 1, outputTokens: 0, seconds: 0.001 })).toBe(1);
  });

  it('bills cached input tokens at the cached price, and never more cached tokens than input tokens', () => {
    const list = price({ inputPerMillion: 2_000_000, cachedInputPerMillion: 500_000, outputPerMillion: 8_000_000 });
    // 600 uncached × 2 + 400 cached × 0.5 + 100 output × 8 = 1200 + 200 + 800.
    expect(computeCost(list, { inputTokens: 1_000, cachedInputTokens: 400, outputTokens: 100 })).toBe(2_200);
    expect(computeCost(list, { inputTokens: 1_000, cachedInputTokens: 0, outputTokens: 0 })).toBe(2_000);
    expect(computeCost(list, { inputTokens: 1_000, cachedInputTokens: 5_000, outputTokens: 0 })).toBe(500);
    // With the catalog's default (cached = input), caching changes nothing.
    const uniform = toMicroPrice({ input: 2, output: 8 });
    expect(computeCost(uniform, { inputTokens: 1_000, cachedInputTokens: 400, outputTokens: 0 })).toBe(computeCost(uniform, { inputTokens: 1_000, outputTokens: 0 }));
  });

  it('bills media units: images, characters, seconds (rounded up), and the flat fee', () => {
    const media = toMicroPrice({ input: 0, output: 0, image: 0.04, character: 0.000015, second: 0.0001, request: 0.01 });
    expect(computeCost(media, { inputTokens: 0, outputTokens: 0 })).toBe(10_000);
    expect(computeCost(media, { inputTokens: 0, outputTokens: 0, images: 3 })).toBe(3 * 40_000 + 10_000);
    expect(computeCost(media, { inputTokens: 0, outputTokens: 0, characters: 4_096 })).toBe(4_096 * 15 + 10_000);
    // 100 µc per second: 12.5 s = 1,250 µc; 1.2345 s = 123.45 µc → 124.
    expect(computeCost(media, { inputTokens: 0, outputTokens: 0, seconds: 12.5 })).toBe(1_250 + 10_000);
    expect(computeCost(media, { inputTokens: 0, outputTokens: 0, seconds: 1.2345 })).toBe(124 + 10_000);
    // 0.1 + 0.2 seconds is 300 ms, not 301 ms of float noise.
    expect(computeCost(toMicroPrice({ input: 0, output: 0, second: 1 }), { inputTokens: 0, outputTokens: 0, seconds: 0.1 + 0.2 })).toBe(300_000);
  });

  it('answers whole micro-credits for any mix', () => {
    const list = toMicroPrice({ input: 0.15, output: 0.6, cachedInput: 0.075, image: 0.04, second: 0.0001, character: 0.000015, request: 0.000001 });
    for (let inputTokens = 0; inputTokens < 50; inputTokens += 7) {
      for (let outputTokens = 0; outputTokens < 50; outputTokens += 11) {
        const cost = computeCost(list, { inputTokens, outputTokens, cachedInputTokens: inputTokens >> 1, images: 1, seconds: 0.3333, characters: 3 });
        expect(Number.isSafeInteger(cost)).toBe(true);
      }
    }
  });
});

describe('applyDiscount', () => {
  it('takes the percentage off, rounding the discount down', () => {
    expect(applyDiscount(10_000, 20)).toBe(8_000);
    // 20% of 7 is 1.4: the discount is 1, the charge 6.
    expect(applyDiscount(7, 20)).toBe(6);
    expect(applyDiscount(1, 99)).toBe(1);
    expect(applyDiscount(999, 33)).toBe(999 - 329);
    expect(applyDiscount(12_345, 100)).toBe(0);
  });

  it('leaves the cost alone without a positive percentage', () => {
    expect(applyDiscount(12_345, 0)).toBe(12_345);
    expect(applyDiscount(12_345, -5)).toBe(12_345);
    expect(applyDiscount(0, 50)).toBe(0);
  });

  it('is the list cost less floor(list × percentage / 100) for every integer percentage', () => {
    for (const list of [1, 3, 99, 10_000, 123_457, 9_007_199_254]) {
      for (let percentage = 1; percentage <= 100; percentage++) {
        const charged = applyDiscount(list, percentage);
        expect(charged).toBe(list - Math.floor((list * percentage) / 100));
        expect(Number.isSafeInteger(charged)).toBe(true);
        // Never under-billed by the rounding: at least the exact discounted amount.
        expect(charged * 100).toBeGreaterThanOrEqual(list * (100 - percentage));
      }
    }
  });
});

describe('sums of charges', () => {
  it('adds 1,000,000 requests of 0.000001 credits to exactly 1 credit', () => {
    const perRequest = computeCost(toMicroPrice({ input: 0, output: 0, request: 0.000001 }), { inputTokens: 0, outputTokens: 0 });
    expect(perRequest).toBe(1);
    let total = 0;
    let floats = 0;
    for (let index = 0; index < 1_000_000; index++) {
      total += perRequest;
      floats += 0.000001;
    }
    expect(total).toBe(1_000_000);
    expect(microToCredits(total)).toBe(1);
    // What the integers avoid: the same sum in floating-point credits drifts.
    expect(floats).not.toBe(1);
  });

  it('adds discounted per-token charges exactly', () => {
    const list = toMicroPrice({ input: 0.15, output: 0.6 });
    let total = 0;
    let expected = 0n;
    for (let index = 0; index < 10_000; index++) {
      const inputTokens = 1 + (index % 97);
      const outputTokens = index % 13;
      const cost = applyDiscount(computeCost(list, { inputTokens, outputTokens }), index % 31);
      total += cost;
      expected += BigInt(cost);
    }
    expect(BigInt(total)).toBe(expected);
    expect(Number.isSafeInteger(total)).toBe(true);
  });
});

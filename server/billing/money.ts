/**
 * Money is integer micro-credits (1 credit = 1,000,000 µc) from the catalog on;
 * only configuration and display use decimal credits.
 */
export const MICRO_PER_CREDIT = 1_000_000;

/**
 * How far `credits × 10⁶` may sit from a whole number and still count as one:
 * binary floating-point noise only (a few ulps, e.g. 0.1 + 0.2), never a
 * seventh decimal (≥ 0.1 µc off for any amount a double holds to 7 decimals).
 */
const FLOAT_NOISE = 64 * Number.EPSILON;

/** The most credits, either way, that {@link creditsToMicro} takes: its micro-credits stay a safe integer. */
export const MAX_CREDITS = Math.floor(Number.MAX_SAFE_INTEGER / MICRO_PER_CREDIT);

/** True when {@link creditsToMicro} takes `credits`: at most 6 decimals, within ±{@link MAX_CREDITS}. */
export function isWholeMicroCredits(credits: number): boolean {
  try {
    creditsToMicro(credits);
    return true;
  } catch {
    return false;
  }
}

/** Decimal credits → integer micro-credits; refuses amounts finer than one micro-credit. */
export function creditsToMicro(credits: number): number {
  const scaled = credits * MICRO_PER_CREDIT;
  const rounded = Math.round(scaled);
  if (!(Math.abs(scaled - rounded) <= FLOAT_NOISE * Math.max(1, Math.abs(scaled)))) {
    throw new RangeError(`${credits} has more than 6 decimals`);
  }
  if (!Number.isSafeInteger(rounded)) throw new RangeError(`${credits} credits is out of range`);
  return rounded;
}

/** Micro-credits → a number of credits with at most 6 decimals, for JSON answers. */
export function microToCredits(micro: number): number {
  return Number((micro / MICRO_PER_CREDIT).toFixed(6));
}

/** A model's price in micro-credits: per million tokens, and per media unit (the catalog's `toMicroPrice`). */
export interface MicroPrice {
  inputPerMillion: number;
  outputPerMillion: number;
  cachedInputPerMillion: number;
  image: number;
  second: number;
  character: number;
  request: number;
}

export interface BillableUsage {
  inputTokens: number;
  outputTokens: number;
  /** Part of inputTokens billed at the cached price. */
  cachedInputTokens?: number;
  images?: number;
  seconds?: number;
  characters?: number;
}

const MILLION = 1_000_000n;

/**
 * The list cost of a request, micro-credits, before discount. The fractional
 * parts (tokens, priced per million, and seconds, counted in whole
 * milliseconds) are summed exactly in millionths of a micro-credit and
 * rounded up once, so a request never costs less than what it used; images,
 * characters and the flat fee are whole micro-credits already.
 */
export function computeCost(price: MicroPrice, usage: BillableUsage): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  // Whole microseconds first, so float noise (0.1 + 0.2 s) does not add a millisecond.
  const milliseconds = Math.ceil(Math.round((usage.seconds ?? 0) * 1_000_000) / 1000);
  const fractionNumerator =
    BigInt(uncached) * BigInt(price.inputPerMillion) +
    BigInt(cached) * BigInt(price.cachedInputPerMillion) +
    BigInt(usage.outputTokens) * BigInt(price.outputPerMillion) +
    BigInt(milliseconds) * BigInt(price.second) * 1000n;
  const fractionCost = (fractionNumerator + MILLION - 1n) / MILLION;
  const wholeCost = BigInt(usage.images ?? 0) * BigInt(price.image) + BigInt(usage.characters ?? 0) * BigInt(price.character);
  return Number(fractionCost + wholeCost) + price.request;
}

/** Applies a percentage discount (0–100), rounding the discount down so no charge is under-billed by rounding. */
export function applyDiscount(cost: number, percentage: number): number {
  if (percentage <= 0) return cost;
  return cost - Math.floor((cost * percentage) / 100);
}

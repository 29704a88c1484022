/**
 * Daily per-account discounts. Every gateway instance computes the same
 * discounts without talking to the others: the picks are a pure function of
 * the account id, the rotation window and the pool configuration, drawn from
 * an HMAC-SHA256 stream keyed by the pool's seed (so accounts cannot predict
 * tomorrow's picks without the seed).
 *
 * Discounts rotate at 18:00 Europe/Berlin wall-clock time, which is 17:00 UTC
 * in winter (CET) and 16:00 UTC in summer (CEST); the window spanning a
 * daylight-saving change is 23 or 25 hours long.
 */
import { createHmac } from 'node:crypto';

export interface DiscountPool {
  /** Models that can be discounted; order and duplicates do not matter. */
  models: string[];
  /** Smallest percentage off, integer 1..100. */
  minPercentage: number;
  /** Largest percentage off, integer minPercentage..100. */
  maxPercentage: number;
  /** How many models of the pool an account gets per window (capped by the pool size); 0 = none. */
  perAccount: number;
  /** Secret that makes the picks unguessable; changing it reshuffles every account. */
  seed: string;
}

export interface Discount {
  model: string;
  /** Integer percent off. */
  percentage: number;
  /** End of the rotation window. */
  expiresAt: Date;
}

/** The answer of `GET /v1/discounts/my-discounts`. */
export interface DiscountResult {
  discounts: Array<{ model: string; percentage: number; expires_at: number; time_remaining: string }>;
  /** Unix seconds of the next rotation. */
  next_rotation: number;
}

export const DEFAULT_DISCOUNT_POOL: DiscountPool = {
  models: [],
  minPercentage: 10,
  maxPercentage: 30,
  perAccount: 1,
  seed: 'umg-discounts',
};

const ROTATION_HOUR = 18;
const ROTATION_TIME_ZONE = 'Europe/Berlin';

const berlinClock = new Intl.DateTimeFormat('en-US', {
  timeZone: ROTATION_TIME_ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function berlinWallClock(instant: number): WallClock {
  const fields: Record<string, number> = {};
  for (const part of berlinClock.formatToParts(instant)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return {
    year: fields.year,
    month: fields.month,
    day: fields.day,
    hour: fields.hour,
    minute: fields.minute,
    second: fields.second,
  };
}

/** Berlin's offset from UTC at an instant, ms (3,600,000 for CET, 7,200,000 for CEST). */
function berlinOffsetMs(instant: number): number {
  const wall = berlinWallClock(instant);
  const wallAsUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  return wallAsUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant at which Berlin clocks show the given wall time, passed as the
 * ms value `Date.UTC` gives for it. Correcting twice settles the offset for
 * any time outside the skipped or repeated hour; 18:00 is never in those.
 */
function berlinWallToInstant(wallAsUtc: number): number {
  const first = wallAsUtc - berlinOffsetMs(wallAsUtc);
  return wallAsUtc - berlinOffsetMs(first);
}

function rotationOn(year: number, month: number, day: number): number {
  return berlinWallToInstant(Date.UTC(year, month - 1, day, ROTATION_HOUR));
}

function computeRotationWindow(instant: number): { start: number; end: number } {
  const today = berlinWallClock(instant);
  // Date.UTC normalises day 0 and day 32, so month and year ends need no care.
  const rotationToday = rotationOn(today.year, today.month, today.day);
  if (instant >= rotationToday) return { start: rotationToday, end: rotationOn(today.year, today.month, today.day + 1) };
  return { start: rotationOn(today.year, today.month, today.day - 1), end: rotationToday };
}

// Billing asks for every request; Intl formatting costs tens of microseconds,
// and nearly every call falls in the window computed last.
let lastWindow = { start: 0, end: 0 };

/** The rotation window containing `now`: from the most recent 18:00 Berlin time (inclusive) to the next one. */
export function rotationWindow(now: Date): { start: Date; end: Date } {
  const instant = now.getTime();
  if (!Number.isFinite(instant)) throw new RangeError('rotationWindow needs a valid date');
  if (instant < lastWindow.start || instant >= lastWindow.end) lastWindow = computeRotationWindow(instant);
  return { start: new Date(lastWindow.start), end: new Date(lastWindow.end) };
}

/**
 * Deterministic random numbers: HMAC-SHA256(seed, `account|window|block`)
 * cut into 32-bit words, as many blocks as the draws need.
 */
class DiscountRandom {
  private block = Buffer.alloc(0);
  private offset = 0;
  private blockIndex = 0;

  constructor(
    private readonly seed: string,
    private readonly message: string,
  ) {}

  private nextUint32(): number {
    if (this.offset + 4 > this.block.length) {
      this.block = createHmac('sha256', this.seed).update(`${this.message}|${this.blockIndex}`).digest();
      this.blockIndex += 1;
      this.offset = 0;
    }
    const value = this.block.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }

  /** Uniform integer in [0, bound); rejection sampling avoids the modulo bias. */
  below(bound: number): number {
    const acceptable = Math.floor(0x1_0000_0000 / bound) * bound;
    while (true) {
      const value = this.nextUint32();
      if (value < acceptable) return value % bound;
    }
  }
}

function isPercentage(value: number): boolean {
  return Number.isInteger(value) && value >= 1 && value <= 100;
}

/** Throws a RangeError naming the first invalid field; for checking configuration at load time. */
export function assertDiscountPool(pool: DiscountPool): void {
  if (!isPercentage(pool.minPercentage)) throw new RangeError(`discount minPercentage must be an integer 1..100, got ${pool.minPercentage}`);
  if (!isPercentage(pool.maxPercentage)) throw new RangeError(`discount maxPercentage must be an integer 1..100, got ${pool.maxPercentage}`);
  if (pool.minPercentage > pool.maxPercentage) {
    throw new RangeError(`discount minPercentage (${pool.minPercentage}) is above maxPercentage (${pool.maxPercentage})`);
  }
  if (!Number.isInteger(pool.perAccount) || pool.perAccount < 0) {
    throw new RangeError(`discount perAccount must be a non-negative integer, got ${pool.perAccount}`);
  }
}

/** The account's discounts in the window containing `now`, sorted by model. */
export function discountsFor(accountId: string, pool: DiscountPool, now: Date): Discount[] {
  const window = rotationWindow(now);
  // Sorted and deduplicated, so instances that list the pool in another order agree.
  const candidates = [...new Set(pool.models)].sort();
  const count = Math.min(pool.perAccount, candidates.length);
  if (count <= 0) return [];
  assertDiscountPool(pool);

  const random = new DiscountRandom(pool.seed, `${accountId}|${window.start.getTime() / 1000}`);
  const span = pool.maxPercentage - pool.minPercentage + 1;
  const discounts: Discount[] = [];
  // Partial Fisher-Yates: each step moves one not-yet-picked model into place.
  for (let index = 0; index < count; index++) {
    const pick = index + random.below(candidates.length - index);
    [candidates[index], candidates[pick]] = [candidates[pick], candidates[index]];
    discounts.push({
      model: candidates[index],
      percentage: pool.minPercentage + random.below(span),
      expiresAt: window.end,
    });
  }
  return discounts.sort((left, right) => (left.model < right.model ? -1 : left.model > right.model ? 1 : 0));
}

/** The percentage billing applies to this account's request for `model` at `now`; 0 when none. */
export function discountPercentageFor(accountId: string, model: string, pool: DiscountPool, now: Date): number {
  if (!pool.models.includes(model)) return 0;
  return discountsFor(accountId, pool, now).find((discount) => discount.model === model)?.percentage ?? 0;
}

/** `"5h 12m"`, `"12m 3s"`, `"45s"`; `"0s"` once the time has passed. Rounds down. */
export function formatTimeRemaining(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return '0s';
  const totalSeconds = Math.floor(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${seconds}s`;
  return `${seconds}s`;
}

function toUnixSeconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}

/** The SPEC's Discount result for the account at `now`. */
export function toDiscountResult(accountId: string, pool: DiscountPool, now: Date): DiscountResult {
  const window = rotationWindow(now);
  return {
    discounts: discountsFor(accountId, pool, now).map((discount) => ({
      model: discount.model,
      percentage: discount.percentage,
      expires_at: toUnixSeconds(discount.expiresAt),
      time_remaining: formatTimeRemaining(discount.expiresAt.getTime() - now.getTime()),
    })),
    next_rotation: toUnixSeconds(window.end),
  };
}

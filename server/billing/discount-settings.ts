import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { notify } from '../../db/client.js';
import { insertSettingIfAbsent, readSetting, readSettingForUpdate, writeSetting } from '../../db/queries/settings.queries.js';
import { assertDiscountPool, DEFAULT_DISCOUNT_POOL, discountPercentageFor, toDiscountResult, type DiscountPool, type DiscountResult } from './discounts.js';

/** What billing asks of the discount rotation. */
export interface DiscountSource {
  percentageFor(accountId: string, modelId: string, now: Date): number;
}

const POOL_SETTING = 'discount_pool';
export const SETTINGS_CHANNEL = 'umg_settings';

/**
 * The operator's discount pool, kept in the settings table and in memory.
 * Every instance derives the same discounts from it without coordination;
 * a change is announced so all instances reload it. The pool's seed is
 * random per installation so discounts cannot be predicted from outside.
 */
export class DiscountSettings implements DiscountSource {
  private pool: DiscountPool = DEFAULT_DISCOUNT_POOL;

  constructor(private readonly db: Kysely<Database>) {}

  async load(): Promise<void> {
    const stored = await readSetting(this.db, POOL_SETTING);
    if (stored !== undefined) {
      this.pool = stored as DiscountPool;
      return;
    }
    const initial: DiscountPool = { ...DEFAULT_DISCOUNT_POOL, seed: randomBytes(16).toString('hex') };
    this.pool = (await insertSettingIfAbsent(this.db, POOL_SETTING, initial)) as DiscountPool;
  }

  get current(): DiscountPool {
    return this.pool;
  }

  async update(changes: Partial<Omit<DiscountPool, 'seed'>>): Promise<DiscountPool> {
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as Partial<DiscountPool>;
    // Merged onto the stored pool, not onto this instance's copy: a change
    // made on another instance a moment ago may not have been announced here yet.
    const next = await this.db.transaction().execute(async (trx) => {
      const stored = (await readSettingForUpdate(trx, POOL_SETTING)) as DiscountPool | undefined;
      const merged: DiscountPool = { ...(stored ?? this.pool), ...given };
      assertDiscountPool(merged);
      await writeSetting(trx, POOL_SETTING, merged);
      return merged;
    });
    this.pool = next;
    await notify(this.db, SETTINGS_CHANNEL, POOL_SETTING);
    return next;
  }

  percentageFor(accountId: string, modelId: string, now: Date): number {
    if (this.pool.models.length === 0) return 0;
    return discountPercentageFor(accountId, modelId, this.pool, now);
  }

  resultFor(accountId: string, now: Date): DiscountResult {
    return toDiscountResult(accountId, this.pool, now);
  }
}

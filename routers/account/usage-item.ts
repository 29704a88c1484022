import type { UsageRow } from '../../db/schema.js';
import { microToCredits } from '../../server/billing/money.js';
import type { usageItemSchema } from './account.schema.js';
import type { z } from 'zod';

/** One charged usage row as `/v1/usage` (and the dashboard) show it: credits, unix seconds. */
export function toUsageItem(row: UsageRow): z.infer<typeof usageItemSchema> {
  return {
    id: row.request_id,
    created_at: Math.floor(new Date(row.created_at).getTime() / 1000),
    endpoint: row.endpoint,
    model: row.model,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    cached_input_tokens: row.cached_input_tokens,
    cost: microToCredits(row.cost),
    discount_percentage: row.discount_percentage,
    status: row.status,
    stream: row.stream,
    aborted: row.aborted,
    // snake_case like every other field of /v1/usage (the stored price's keys are camelCase).
    price: Object.fromEntries(Object.entries(row.price as Record<string, number>).map(([name, micro]) => [snakeCase(name), microToCredits(micro)])),
  };
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Unix seconds or an ISO 8601 time (validated by the schema) as a Date. */
export function toDate(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
}

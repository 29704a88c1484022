import type { Executor } from './executor.js';

/** Keeps one generated image until `expiresAt`. */
export async function insertGeneratedImage(
  db: Executor,
  row: { id: string; accountId: string; contentType: string; bytes: Uint8Array; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('generated_images')
    .values({ id: row.id, account_id: row.accountId, content_type: row.contentType, bytes: row.bytes, expires_at: row.expiresAt })
    .execute();
}

/** An image still within its lifetime at `now` whose account is not disabled, or undefined. */
export async function findLiveGeneratedImage(db: Executor, id: string, now: Date): Promise<{ contentType: string; bytes: Uint8Array; expiresAt: Date } | undefined> {
  const row = await db
    .selectFrom('generated_images')
    .innerJoin('accounts', 'accounts.id', 'generated_images.account_id')
    .select(['generated_images.content_type', 'generated_images.bytes', 'generated_images.expires_at'])
    .where('generated_images.id', '=', id)
    .where('generated_images.expires_at', '>', now)
    .where('accounts.disabled', '=', false)
    .executeTakeFirst();
  return row ? { contentType: row.content_type, bytes: row.bytes, expiresAt: new Date(row.expires_at) } : undefined;
}

/** Deletes up to `limit` images expired at `now`; answers how many went. */
export async function deleteExpiredGeneratedImages(db: Executor, now: Date, limit: number): Promise<number> {
  const expired = db.selectFrom('generated_images').select('id').where('expires_at', '<=', now).limit(limit);
  const result = await db.deleteFrom('generated_images').where('id', 'in', expired).executeTakeFirst();
  return Number(result.numDeletedRows);
}

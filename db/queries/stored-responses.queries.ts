import type { Executor } from './executor.js';

/** One of this account's earlier answers (another account's id is "not found"). */
export async function findStoredConversation(db: Executor, accountId: string, responseId: string): Promise<unknown | undefined> {
  const row = await db
    .selectFrom('stored_responses')
    .select('conversation')
    .where('id', '=', responseId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.conversation) as unknown);
}

/** Keeps an answer for `previous_response_id` (the first write of an id wins). */
export async function insertStoredResponse(db: Executor, row: { id: string; accountId: string; model: string; conversation: unknown }): Promise<void> {
  await db
    .insertInto('stored_responses')
    .values({ id: row.id, account_id: row.accountId, model: row.model, conversation: JSON.stringify(row.conversation) })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

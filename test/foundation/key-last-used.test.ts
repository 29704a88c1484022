/**
 * A key's `last_used_at` is written off the request path (server/auth/key-usage.ts)
 * and shows in the admin key list once flushed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listKeys } from '../../server/accounts/accounts.service.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let harness: TestGateway;

beforeAll(async () => {
  harness = await startTestGateway();
});

afterAll(async () => {
  await harness?.close();
});

it('records when a key was last used', async () => {
  const { accountId, key, keyId } = await harness.createAccountWithKey();
  const [before] = await listKeys(harness.gateway.services.db, accountId, false);
  expect(before).toMatchObject({ id: keyId, last_used_at: null });

  const sentAt = Date.now();
  const answer = await fetch(`${harness.url}/v1/credits`, { headers: { authorization: `Bearer ${key}` } });
  expect(answer.status).toBe(200);
  await harness.gateway.services.keyUsage.flush();

  const [after] = await listKeys(harness.gateway.services.db, accountId, false);
  expect(after!.last_used_at).toBeInstanceOf(Date);
  expect(after!.last_used_at!.getTime()).toBeGreaterThanOrEqual(sentAt - 1000);
});

/**
 * Access to restricted families comes from grants: without a live grant every route of the
 * family (chat completions, messages, responses, streaming or not, count_tokens, compact)
 * answers 403 ACCESS_NOT_GRANTED before any upstream call or hold, and nothing is charged.
 * A grant serves; a revocation or an expiry refuses again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamWorld, type UpstreamWorld } from '../support/e2e.js';
import type { TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Json } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { dataOf, trpcMutation, trpcQuery } from '../foundation/http.js';
import { chargesOf, DECLARED_FAMILY, expectRefused, expectServed, FORMATS, RESTRICTED_ENV, restrictedCatalog, send } from './restricted-support.js';

let world: UpstreamWorld;
let gateway: TestGateway;

beforeAll(async () => {
  world = await startUpstreamWorld({ catalog: restrictedCatalog, env: RESTRICTED_ENV });
  gateway = world.gateway;
});

afterAll(async () => {
  await world?.close();
});

/** The restricted model of each format on a real upstream, so that "no upstream call" can be seen. */
const UPSTREAM_MODEL = { chat: 'gpt-companion', messages: 'claude-companion', responses: 'gpt-companion' } as const;
const HELLO = { user: 'Say hello.' };

function grant(accountId: string, family: string, extra: Json = {}) {
  return trpcMutation(gateway.url, 'admin.restricted.grants.grant', { accountId, family, ...extra }, gateway.adminToken);
}

function revoke(accountId: string, family: string) {
  return trpcMutation(gateway.url, 'admin.restricted.grants.revoke', { accountId, family }, gateway.adminToken);
}

describe('without a grant', () => {
  it('refuses every format, streaming and not, before any upstream call or hold, and charges nothing', async () => {
    const { accountId, key } = await gateway.createAccountWithKey({ credits: 10 });
    const before = await chargesOf(gateway, accountId);
    world.openaiUpstream.reset();
    world.anthropicUpstream.reset();
    for (const format of FORMATS) {
      for (const stream of [false, true]) {
        for (const model of [UPSTREAM_MODEL[format.name], 'mock-restricted']) {
          const answer = await send(gateway, key, format, model, HELLO, stream);
          expectRefused(answer, format, 'ACCESS_NOT_GRANTED');
        }
      }
    }
    const countTokens = await postJson(`${gateway.url}/v1/messages/count_tokens`, { model: 'claude-companion', messages: [{ role: 'user', content: 'hi' }] }, bearer(key));
    expectRefused(countTokens, { name: 'messages' }, 'ACCESS_NOT_GRANTED');
    const compact = await postJson(`${gateway.url}/v1/responses/compact`, { model: 'gpt-companion', input: [{ role: 'user', content: 'hi' }] }, bearer(key));
    expectRefused(compact, { name: 'responses' }, 'ACCESS_NOT_GRANTED');

    expect(world.openaiUpstream.requests).toHaveLength(0);
    expect(world.anthropicUpstream.requests).toHaveLength(0);
    expect(await chargesOf(gateway, accountId)).toEqual(before);
    expect(before).toMatchObject({ rows: 0, held: 0, holds: 0 });
  });

  it('serves unrestricted models and keeps the public catalog unfiltered', async () => {
    const { key } = await gateway.createAccountWithKey();
    expectServed(await send(gateway, key, FORMATS[0]!, 'mock-chat', HELLO, false), FORMATS[0]!, false);
    const models = await getJson(`${gateway.url}/v1/models`, bearer(key));
    expect((models.body.data as Json[]).map((model) => model.id)).toEqual(expect.arrayContaining(['mock-restricted', 'gpt-companion', 'claude-companion']));
  });

  it('a grant on another family does not open this one', async () => {
    const { accountId, key } = await gateway.createAccountWithKey();
    dataOf(await grant(accountId, 'restricted'));
    expectServed(await send(gateway, key, FORMATS[0]!, 'mock-restricted', HELLO, false), FORMATS[0]!, false);
    expectRefused(await send(gateway, key, FORMATS[0]!, 'gpt-companion', HELLO, false), FORMATS[0]!, 'ACCESS_NOT_GRANTED');
  });
});

describe('with a grant', () => {
  it('serves every format, streaming and not, then refuses again after the revocation', async () => {
    const { accountId, key } = await gateway.createAccountWithKey();
    // Cached as "no grant" first: the grant must reach the cache.
    expectRefused(await send(gateway, key, FORMATS[0]!, 'gpt-companion', HELLO, false), FORMATS[0]!, 'ACCESS_NOT_GRANTED');
    const granted = dataOf<Json>(await grant(accountId, DECLARED_FAMILY, { note: 'contract 42' }));
    expect(granted).toMatchObject({ accountId, family: DECLARED_FAMILY, grantedBy: 'admin-token', note: 'contract 42', expiresAt: null, revokedAt: null, active: true });
    for (const format of FORMATS) {
      for (const stream of [false, true]) expectServed(await send(gateway, key, format, UPSTREAM_MODEL[format.name], HELLO, stream), format, stream);
    }
    const countTokens = await postJson(`${gateway.url}/v1/messages/count_tokens`, { model: 'claude-companion', messages: [{ role: 'user', content: 'hi' }] }, bearer(key));
    expect(countTokens.status, countTokens.text).toBe(200);

    const revoked = dataOf<Json>(await revoke(accountId, DECLARED_FAMILY));
    expect(revoked).toMatchObject({ id: granted.id, revokedBy: 'admin-token', active: false });
    for (const format of FORMATS) {
      for (const stream of [false, true]) expectRefused(await send(gateway, key, format, UPSTREAM_MODEL[format.name], HELLO, stream), format, 'ACCESS_NOT_GRANTED');
    }
  });

  it('the legacy restricted_access flag of test accounts is a grant on the legacy family', async () => {
    const { accountId, key } = await gateway.createAccountWithKey({ restrictedAccess: true });
    expectServed(await send(gateway, key, FORMATS[1]!, 'mock-restricted', HELLO, true), FORMATS[1]!, true);
    const grants = dataOf<Json[]>(await trpcQuery(gateway.url, 'admin.restricted.grants.list', { accountId }, gateway.adminToken));
    expect(grants).toEqual([expect.objectContaining({ family: 'restricted', active: true })]);
  });

  it('an expired grant refuses at request time, with no change announced', async () => {
    const { accountId, key } = await gateway.createAccountWithKey();
    // Long enough for a request on a loaded machine to come before it; the account is cached with it.
    const expiresAt = new Date(Date.now() + 5_000).toISOString();
    dataOf(await grant(accountId, DECLARED_FAMILY, { expiresAt }));
    expectServed(await send(gateway, key, FORMATS[0]!, 'gpt-companion', HELLO, false), FORMATS[0]!, false);
    let last = 0;
    await waitFor(
      async () => {
        const answer = await send(gateway, key, FORMATS[0]!, 'gpt-companion', HELLO, false);
        last = answer.status;
        return answer.status === 403;
      },
      { timeoutMs: 30_000, intervalMs: 250, message: 'the expired grant to refuse' },
    );
    expect(last).toBe(403);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
    const listed = dataOf<Json[]>(await trpcQuery(gateway.url, 'admin.restricted.grants.list', { accountId, includeInactive: true }, gateway.adminToken));
    expect(listed).toEqual([expect.objectContaining({ expiresAt, revokedAt: null, active: false })]);
    expect(dataOf<Json[]>(await trpcQuery(gateway.url, 'admin.restricted.grants.list', { accountId }, gateway.adminToken))).toEqual([]);
  });
});

describe('grant administration', () => {
  it('keeps every grant as history: a new grant supersedes the current one', async () => {
    const { accountId } = await gateway.createAccountWithKey();
    const first = dataOf<Json>(await grant(accountId, DECLARED_FAMILY));
    const second = dataOf<Json>(await grant(accountId, DECLARED_FAMILY, { note: 'renewed' }));
    const all = dataOf<Json[]>(await trpcQuery(gateway.url, 'admin.restricted.grants.list', { accountId, includeInactive: true }, gateway.adminToken));
    expect(all.map((entry) => entry.id).sort()).toEqual([first.id, second.id].sort());
    expect(all.find((entry) => entry.id === first.id)).toMatchObject({ active: false, revokeNote: `superseded by ${second.id as string}` });
    const byFamily = dataOf<Json[]>(await trpcQuery(gateway.url, 'admin.restricted.grants.list', { family: DECLARED_FAMILY }, gateway.adminToken));
    expect(byFamily.map((entry) => entry.id)).toContain(second.id);
    expect(byFamily.map((entry) => entry.id)).not.toContain(first.id);
  });

  it('refuses bad input with a 4xx naming the field', async () => {
    const { accountId } = await gateway.createAccountWithKey();
    const cases: Array<[string, Json, number, string]> = [
      ['admin.restricted.grants.grant', { accountId, family: 'no-such-family' }, 400, 'INVALID_REQUEST'],
      ['admin.restricted.grants.grant', { accountId, family: DECLARED_FAMILY, expiresAt: 'tomorrow' }, 400, 'INVALID_REQUEST'],
      ['admin.restricted.grants.grant', { accountId, family: DECLARED_FAMILY, expiresAt: '2001-01-01T00:00:00Z' }, 400, 'INVALID_REQUEST'],
      ['admin.restricted.grants.grant', { accountId: 'acct_missing', family: DECLARED_FAMILY }, 404, 'NOT_FOUND'],
      ['admin.restricted.grants.revoke', { accountId, family: DECLARED_FAMILY }, 404, 'NOT_FOUND'],
      ['admin.restricted.grants.grant', { family: DECLARED_FAMILY }, 400, 'INVALID_REQUEST'],
    ];
    for (const [path, input, status, code] of cases) {
      const answer = await trpcMutation(gateway.url, path, input, gateway.adminToken);
      expect(answer.error?.data.httpStatus, `${path} ${JSON.stringify(input)}: ${answer.text}`).toBe(status);
      expect(answer.error?.data.gatewayCode).toBe(code);
    }
    const noToken = await trpcMutation(gateway.url, 'admin.restricted.grants.grant', { accountId, family: DECLARED_FAMILY });
    expect(noToken.error?.data.gatewayCode).toBe('UNAUTHORIZED_ADMIN');
  });
});

/**
 * What would fail silently later is said at start: a provider whose `env:`
 * secret is not set, accounts on a plan RATE_LIMITS no longer has (they get
 * the pro limit), and a gateway behind a proxy (TRUSTED_PROXIES) without
 * PUBLIC_BASE_URL (its image links would point at the listen address).
 * Plans are checked when an account is created or moved.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { dataOf, expectTrpcError, trpcMutation } from './http.js';

const gateways: TestGateway[] = [];
let database: TestDatabase | undefined;

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await database?.drop();
});

function warnings(lines: string[], event: string): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.event === event && line.level === 'warn');
}

const CATALOG: CatalogFile = {
  providers: [
    { id: 'upstream-a', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'env:UMG_TEST_UNSET_SECRET' },
    { id: 'upstream-b', kind: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'env:UMG_TEST_SET_SECRET', headers: { 'x-team': 'env:UMG_TEST_UNSET_HEADER' } },
  ],
  models: [{ id: 'model-a', ownedBy: 'test', provider: 'upstream-a', upstreamModel: 'a', endpoints: ['/v1/chat/completions'], pricing: { input: 1, output: 1 }, deployments: [{ provider: 'upstream-b', priority: 1, weight: 1 }] }],
};

describe('warnings at start', () => {
  it('names each provider whose env: secret is unset, and the variable', async () => {
    const lines: string[] = [];
    gateways.push(await startTestGateway({ catalog: CATALOG, env: { UMG_TEST_SET_SECRET: 'sk-set-0123456789' }, logLines: lines }));
    const unset = warnings(lines, 'catalog.secret_unset').map((line) => [line.provider, line.variable]);
    expect(unset).toEqual([
      ['upstream-a', 'UMG_TEST_UNSET_SECRET'],
      ['upstream-b', 'UMG_TEST_UNSET_HEADER'],
    ]);
    expect(lines.join('\n')).not.toContain('sk-set-0123456789');
    // Not behind a proxy: the listen address is where clients are.
    expect(warnings(lines, 'images.public_base_url_missing')).toEqual([]);
  });

  it('says PUBLIC_BASE_URL is missing when TRUSTED_PROXIES is set, and not once it is set', async () => {
    const behindProxy: string[] = [];
    gateways.push(await startTestGateway({ env: { TRUSTED_PROXIES: '127.0.0.1', PUBLIC_BASE_URL: '' }, logLines: behindProxy }));
    expect(warnings(behindProxy, 'images.public_base_url_missing')).toEqual([expect.objectContaining({ message: expect.stringContaining('PUBLIC_BASE_URL') })]);

    const configured: string[] = [];
    gateways.push(await startTestGateway({ env: { TRUSTED_PROXIES: '127.0.0.1', PUBLIC_BASE_URL: 'https://gw.example.com' }, logLines: configured }));
    expect(warnings(configured, 'images.public_base_url_missing')).toEqual([]);
  });

  it('names a plan that accounts have but RATE_LIMITS no longer lists', async () => {
    database = await createTestDatabase();
    const withTeam = await startTestGateway({ databaseUrl: database.url, env: { RATE_LIMITS: 'team=5' } });
    gateways.push(withTeam);
    const created = dataOf<{ plan: string }>(await trpcMutation(withTeam.url, 'admin.accounts.create', { name: 'team account', plan: 'team' }, withTeam.adminToken));
    expect(created.plan).toBe('team');

    const lines: string[] = [];
    const withoutTeam = await startTestGateway({ databaseUrl: database.url, logLines: lines });
    gateways.push(withoutTeam);
    expect(warnings(lines, 'accounts.unknown_plan')).toEqual([expect.objectContaining({ plan: 'team', accounts: 1 })]);
    const refused = expectTrpcError(await trpcMutation(withoutTeam.url, 'admin.accounts.create', { name: 'another', plan: 'team' }, withoutTeam.adminToken), 400, 'INVALID_REQUEST');
    expect(refused.message).toBe('Unknown plan "team": the plans are "free", "pro" (RATE_LIMITS adds more).');
  });
});

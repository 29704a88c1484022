/**
 * Provider health end to end: a deployment whose provider answers 500 five
 * times in a row is cooled down — the next requests go straight to the
 * second deployment — and once the cooldown ends one probe goes through and
 * it serves again. A 4xx never counts. The state is this instance's own
 * (a second gateway still tries the failing deployment), shown by
 * `admin.providers.health` and `/readyz` (which stays 200).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { OPENAI_SECRET, SECRET_ENV, chatModel, openAIProvider } from '../chat/chat-e2e.js';

/**
 * Long enough that the checks made while a deployment is cooling finish
 * within it on a heavily loaded machine (each is a few requests); the test
 * then waits for its end on the state itself, never for a fixed time.
 */
const COOLDOWN_MS = 20_000;
/** Budget of the tests that wait out a cooldown. */
const COOLDOWN_TEST_MS = 180_000;
const WAIT = { timeoutMs: COOLDOWN_MS * 4, intervalMs: 200, message: 'the cooldown to end' };
let primary: UpstreamServer;
let secondary: UpstreamServer;
let gateway: TestGateway;
let other: TestGateway;
let client: OpenAI;
let otherClient: OpenAI;

function catalog(): CatalogFile {
  return {
    providers: [openAIProvider('openai-a', primary.url, { maxRetries: 0 }), openAIProvider('openai-b', secondary.url, { maxRetries: 0 })],
    models: [chatModel('gpt-pair', 'openai-a', 'gpt-4o-mini', { deployments: [{ provider: 'openai-b', priority: 1, weight: 1 }] })],
  };
}

interface HealthAnswer {
  deployments: { model: string; provider: string; state: string; recentFailures: number; cooldowns: number; lastError: string | null }[];
}

async function health(target: TestGateway): Promise<HealthAnswer> {
  const answer = await getJson(`${target.url}/trpc/admin.providers.health`, bearer(target.adminToken));
  expect(answer.status).toBe(200);
  return (answer.body as { result: { data: HealthAnswer } }).result.data;
}

async function stateOf(target: TestGateway, provider: string): Promise<string> {
  return (await health(target)).deployments.find((entry) => entry.provider === provider)?.state ?? 'healthy';
}

async function chat(on: OpenAI = client): Promise<void> {
  const answer = await on.chat.completions.create({ model: 'gpt-pair', messages: [{ role: 'user', content: 'hello' }] });
  expect(answer.choices[0]!.message.content).toBe('Echo: hello');
}

beforeAll(async () => {
  primary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  secondary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  const options = { env: { ...SECRET_ENV, PROVIDER_COOLDOWN_MS: String(COOLDOWN_MS), PROVIDER_COOLDOWN_FAILURES: '5' }, config: { upstream: FAST_UPSTREAM }, catalog: catalog() };
  gateway = await startTestGateway(options);
  other = await startTestGateway(options);
  const { key } = await gateway.createAccountWithKey({ credits: 100 });
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
  const otherKey = await other.createAccountWithKey({ credits: 100 });
  otherClient = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: otherKey.key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await other?.close();
  await primary?.close();
  await secondary?.close();
});

describe('provider cooldown', () => {
  it('does not count 4xx answers against a provider', async () => {
    primary.reset();
    for (let index = 0; index < 6; index++) primary.script({ kind: 'status', status: 400, message: 'bad request' });
    for (let index = 0; index < 6; index++) await expect(chat()).rejects.toMatchObject({ status: 400 });
    expect(await stateOf(gateway, 'openai-a')).toBe('healthy');
    // A success between failures starts the count again.
    await chat();
    expect(primary.requests).toHaveLength(7);
  });

  it('cools a deployment down after 5 failures, sends traffic to the next, and probes it after the cooldown', async () => {
    primary.reset();
    secondary.reset();
    for (let index = 0; index < 5; index++) primary.script({ kind: 'status', status: 500, message: 'down' });
    // Each of the five fails over to the second deployment and is answered.
    for (let index = 0; index < 5; index++) await chat();
    expect(primary.requests).toHaveLength(5);
    expect(secondary.requests).toHaveLength(5);
    const cooled = (await health(gateway)).deployments.find((entry) => entry.provider === 'openai-a')!;
    expect(cooled).toMatchObject({ model: 'gpt-pair', state: 'cooling', cooldowns: 1, lastError: 'http_500' });

    // Cooled: skipped, not retried per request.
    for (let index = 0; index < 2; index++) await chat();
    expect(primary.requests).toHaveLength(5);
    expect(secondary.requests).toHaveLength(7);

    // /readyz reports it and stays ready.
    const ready = await getJson(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready', providers: [{ model: 'gpt-pair', provider: 'openai-a', state: 'cooling' }] });

    // The other instance keeps its own state: it still tries openai-a (which now answers).
    await chat(otherClient);
    expect(primary.requests).toHaveLength(6);
    primary.reset();

    // Still within the cooldown when the checks above ended (else they proved nothing).
    expect(await stateOf(gateway, 'openai-a')).toBe('cooling');
    await waitFor(async () => (await stateOf(gateway, 'openai-a')) === 'half-open', WAIT);
    // The probe goes through (the provider recovered) and the deployment serves again.
    await chat();
    expect(primary.requests).toHaveLength(1);
    expect(await stateOf(gateway, 'openai-a')).toBe('healthy');
    await chat();
    expect(primary.requests).toHaveLength(2);
    expect(secondary.requests).toHaveLength(7);
    expect((await getJson(`${gateway.url}/readyz`)).body).toEqual({ status: 'ready' });
  }, COOLDOWN_TEST_MS);

  it('cools down again at once when the probe fails', async () => {
    primary.reset();
    for (let index = 0; index < 6; index++) primary.script({ kind: 'reset-before' });
    for (let index = 0; index < 5; index++) await chat();
    expect(await stateOf(gateway, 'openai-a')).toBe('cooling');
    await waitFor(async () => (await stateOf(gateway, 'openai-a')) === 'half-open', WAIT);
    await chat();
    expect(primary.requests).toHaveLength(6);
    const entry = (await health(gateway)).deployments.find((item) => item.provider === 'openai-a')!;
    expect(entry).toMatchObject({ state: 'cooling', cooldowns: 3, lastError: 'connection' });
  }, COOLDOWN_TEST_MS);
});

import { describe, expect, it } from 'vitest';
import type { ResolvedDeployment } from '../catalog/catalog.js';
import { UpstreamError } from '../errors.js';
import { ProviderHealth } from './provider-health.js';

function deployment(id: string): ResolvedDeployment {
  return { provider: { id } as ResolvedDeployment['provider'], upstreamModel: 'm', priority: 0, weight: 1 };
}

const A = deployment('a');
const B = deployment('b');
const failure = () => Promise.reject(new UpstreamError('down', { status: 503, provider: 'a', retryable: true }));
const ok = () => Promise.resolve('ok');

function clock() {
  let now = 1_000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function failTimes(health: ProviderHealth, times: number): Promise<void> {
  for (let index = 0; index < times; index++) await health.track('model', A, failure).catch(() => undefined);
}

describe('ProviderHealth', () => {
  it('cools down after N failures in the window, not after failures spread wider', async () => {
    const time = clock();
    const health = new ProviderHealth({ failures: 3, windowMs: 1_000, cooldownMs: 5_000 }, time.now);
    await failTimes(health, 2);
    time.advance(1_500);
    await failTimes(health, 2);
    expect(health.arrange('model', [A, B])).toEqual([A, B]);
    await failTimes(health, 1);
    expect(health.arrange('model', [A, B])).toEqual([B]);
    // The only deployment is tried even while cooling.
    expect(health.arrange('model', [A])).toEqual([A]);
  });

  it('forgets the deployments a catalog reload took away, and only those', async () => {
    const health = new ProviderHealth({ failures: 1, windowMs: 1_000, cooldownMs: 5_000 });
    await health.track('model', A, failure).catch(() => undefined);
    await health.track('model', B, failure).catch(() => undefined);
    await health.track('other', A, failure).catch(() => undefined);
    health.forget((model, provider) => !(model === 'model' && provider === 'a') && model !== 'gone');
    expect(health.snapshot().map((entry) => `${entry.model}/${entry.provider}`)).toEqual(['model/b', 'other/a']);
    // Added back, the deployment starts healthy.
    expect(health.arrange('model', [A, B])).toEqual([A]);
  });

  it('lets exactly one probe through when half-open; success heals, failure cools again', async () => {
    const time = clock();
    const health = new ProviderHealth({ failures: 1, windowMs: 1_000, cooldownMs: 5_000 }, time.now);
    await failTimes(health, 1);
    time.advance(5_000);
    expect(health.snapshot()[0]!.state).toBe('half-open');
    let release!: () => void;
    const probe = health.track('model', A, () => new Promise<string>((resolve) => (release = () => resolve('ok'))));
    // While the probe is out, others skip the deployment.
    expect(health.arrange('model', [A, B])).toEqual([B]);
    release();
    await probe;
    expect(health.snapshot()[0]!.state).toBe('healthy');
    expect(health.arrange('model', [A, B])).toEqual([A, B]);

    await failTimes(health, 1);
    time.advance(5_000);
    await failTimes(health, 1);
    expect(health.snapshot()[0]).toMatchObject({ state: 'cooling', cooldowns: 3 });
  });

  it('ignores 4xx and client aborts, and frees the probe of an aborted attempt', async () => {
    const time = clock();
    const health = new ProviderHealth({ failures: 1, windowMs: 1_000, cooldownMs: 5_000 }, time.now);
    await health.track('model', A, () => Promise.reject(new UpstreamError('bad', { status: 400, provider: 'a', retryable: false }))).catch(() => undefined);
    expect(health.snapshot()).toEqual([]);
    await failTimes(health, 1);
    time.advance(5_000);
    await health.track('model', A, () => Promise.reject(new Error('aborted'))).catch(() => undefined);
    expect(health.arrange('model', [A, B])).toEqual([A, B]);
    await health.track('model', A, ok);
    expect(health.snapshot()[0]!.state).toBe('healthy');
  });
});

/**
 * The video job queue and the job-owned holds at the SQL level: claims never
 * hand one job to two instances, an expired lease is taken over, only
 * GAPS.md's transitions are possible whatever code runs, and a job is
 * settled once however often settlement is attempted.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueVideos, insertVideo, markVideoCompleted, markVideoProcessing, renewVideoLeases } from '../../db/queries/videos.queries.js';
import type { Executor } from '../../db/queries/executor.js';
import type { VideoAssetsRecord } from '../../db/schema.js';
import type { UsageEntry } from '../../server/billing/billing.js';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { newVideoId } from '../../server/videos/video-object.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf } from '../support/usage.js';
import { videoCatalog } from './video-support.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ catalog: videoCatalog() });
  // The queries are driven by hand here: this instance's own loop stays out of the way.
  await gateway.gateway.services.videos.stop();
});

afterAll(async () => {
  await gateway?.close();
});

/** A claim as an instance's loop makes it, with a per-account cap that does not bind here. */
function claim(instanceId: string, limit: number, maxRunningPerAccount = 100) {
  return claimDueVideos(gateway.gateway.services.db, { instanceId, limit, leaseMs: 60_000, maxRunningPerAccount });
}

async function insertPending(accountId: string, id = newVideoId(), executor: Executor = gateway.gateway.services.db): Promise<string> {
  await insertVideo(executor, {
    id,
    account_id: accountId,
    key_id: null,
    request_id: `req-${id}`,
    model: 'mock-video',
    prompt: 'test',
    size: '320x180',
    seconds: 2,
    discount_percentage: 0,
    input_reference: null,
    assets: null,
    duration: null,
    error: null,
    provider_id: null,
    upstream_model: null,
    provider_job_id: null,
    run_after: new Date(Date.now() - 1000),
    locked_by: null,
    locked_until: null,
    completed_at: null,
  });
  return id;
}

const ASSETS: VideoAssetsRecord = {
  video: { key: 'v/video.mp4', contentType: 'video/mp4', size: 1 },
  thumbnail: { key: 'v/thumbnail', contentType: 'image/png', size: 1 },
  spritesheet: { key: 'v/spritesheet', contentType: 'image/png', size: 1 },
};

function usageEntry(jobId: string, accountId: string, cost: number): UsageEntry {
  return {
    requestId: jobId,
    accountId,
    keyId: null,
    model: 'mock-video',
    endpoint: '/v1/videos',
    provider: 'mock',
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    units: 2000,
    status: 200,
    errorCode: null,
    stream: false,
    aborted: false,
    latencyMs: 1,
    cost,
    price: {},
    discountPercentage: 0,
    heldAmount: 0,
    createdAt: new Date(),
  };
}

describe('the video job queue', () => {
  it('leases each due job to one instance, and lets another take it over once the lease ran out', async () => {
    const { db } = gateway.gateway.services;
    const { accountId } = await gateway.createAccountWithKey();
    const ids = new Set<string>();
    for (let index = 0; index < 6; index++) ids.add(await insertPending(accountId));
    const [first, second] = await Promise.all([claim('instance-a', 6), claim('instance-b', 6)]);
    const claimed = [...first, ...second].map((row) => row.id).filter((id) => ids.has(id));
    expect(claimed.sort()).toEqual([...ids].sort());
    expect(await claim('instance-c', 6)).toEqual([]);

    // instance-a stops renewing (it died): once its leases run out, instance-c takes its jobs.
    const ofA = first.map((row) => row.id).filter((id) => ids.has(id));
    await db.updateTable('videos').set({ locked_until: sql<Date>`now() - interval '1 second'` }).where('locked_by', '=', 'instance-a').execute();
    const takenOver = await claim('instance-c', 6);
    expect(takenOver.map((row) => row.id).sort()).toEqual(ofA.sort());
    // instance-a, back from its stall, no longer holds them and changes nothing.
    expect(await renewVideoLeases(db, 'instance-a', ofA, 60_000)).toEqual(new Set());
    if (ofA.length > 0) {
      expect(await markVideoProcessing(db, { id: ofA[0]!, instanceId: 'instance-a', providerId: 'mock', upstreamModel: 'm', providerJobId: 'x', progress: 0 })).toBe(false);
      expect(await markVideoProcessing(db, { id: ofA[0]!, instanceId: 'instance-c', providerId: 'mock', upstreamModel: 'm', providerJobId: 'x', progress: 0 })).toBe(true);
    }
  });

  it('claims round-robin across accounts, never past the per-account cap of running jobs', async () => {
    const { db } = gateway.gateway.services;
    // This test counts every claimable job: the earlier tests' ones go.
    await db.deleteFrom('videos').execute();
    const flood = (await gateway.createAccountWithKey()).accountId;
    const other = (await gateway.createAccountWithKey()).accountId;
    const floodIds: string[] = [];
    for (let index = 0; index < 8; index++) floodIds.push(await insertPending(flood));
    // Queued after the whole flood.
    const otherIds = [await insertPending(other), await insertPending(other)];
    const owner = new Map([...floodIds.map((id) => [id, 'flood'] as const), ...otherIds.map((id) => [id, 'other'] as const)]);

    // One job per claim, as instances take them when a slot frees: the accounts take turns, each up to the cap of 2.
    const order: string[] = [];
    const claimed = new Set<string>();
    for (let index = 0; index < 6; index++) {
      for (const row of await claim(`instance-${index % 2}`, 1, 2)) {
        order.push(owner.get(row.id)!);
        claimed.add(row.id);
      }
    }
    expect(order).toEqual(['flood', 'other', 'flood', 'other']);

    // A job at the provider (`processing`) still counts as running without a lease, between its polls.
    const first = floodIds.find((id) => claimed.has(id));
    await db.updateTable('videos').set({ status: 'processing', locked_by: null, locked_until: null, run_after: sql<Date>`now() + interval '1 hour'` }).where('id', '=', first!).execute();
    expect(await claim('instance-0', 5, 2)).toEqual([]);
    // A finished job frees one slot of its account, for its next job in line.
    await db.updateTable('videos').set({ status: 'failed' }).where('id', '=', first!).execute();
    const next = await claim('instance-1', 5, 2);
    // One slot, for one of the account's jobs still waiting (jobs created in the same
    // millisecond have no order between them).
    expect(next).toHaveLength(1);
    expect(owner.get(next[0]!.id)).toBe('flood');
    expect(claimed.has(next[0]!.id)).toBe(false);
  });

  it('holds the cap across instances claiming at the same moment, each claim counting the ones before it', async () => {
    const { db } = gateway.gateway.services;
    // A few rounds: on PostgreSQL the first claims also open the pool's connections, and barely overlap.
    for (let round = 0; round < 3; round++) {
      const accounts = [(await gateway.createAccountWithKey()).accountId, (await gateway.createAccountWithKey()).accountId];
      const ids = new Set<string>();
      for (let index = 0; index < 20; index++) ids.add(await insertPending(accounts[index % 2]!));
      // Eight instances with room for five jobs each claim at once (on PostgreSQL, on eight connections).
      const claims = await Promise.all(Array.from({ length: 8 }, (_, index) => claim(`racer-${index}`, 5, 3)));
      expect(claims.flat().filter((row) => ids.has(row.id))).toHaveLength(6);
      // Each account exactly at its cap: no claim went past it, and none missed the room an earlier one left.
      for (const accountId of accounts) {
        const leased = await db.selectFrom('videos').select('id').where('account_id', '=', accountId).where('locked_until', '>', sql<Date>`now()`).execute();
        expect(leased).toHaveLength(3);
      }
      await db.updateTable('videos').set({ status: 'failed', locked_by: null, locked_until: null }).where('account_id', 'in', accounts).execute();
    }
  });

  it('refuses every move outside pending → processing → completed and → failed, whatever statement tries it', async () => {
    const { db } = gateway.gateway.services;
    const { accountId } = await gateway.createAccountWithKey();
    const id = await insertPending(accountId);
    await expect(db.updateTable('videos').set({ status: 'completed' }).where('id', '=', id).execute()).rejects.toThrow(/cannot move from pending to completed/);
    await db.updateTable('videos').set({ status: 'processing' }).where('id', '=', id).execute();
    await expect(db.updateTable('videos').set({ status: 'pending' }).where('id', '=', id).execute()).rejects.toThrow(/cannot move from processing to pending/);
    await db.updateTable('videos').set({ status: 'completed' }).where('id', '=', id).execute();
    for (const status of ['failed', 'processing', 'pending']) {
      await expect(db.updateTable('videos').set({ status }).where('id', '=', id).execute()).rejects.toThrow(/cannot move from completed/);
    }
  });
});

describe('job-owned holds', () => {
  it('holds for the job atomically, settles it once however often it is tried, and keeps the ledger check green', async () => {
    const { db, billing, instanceId } = gateway.gateway.services;
    const { accountId } = await gateway.createAccountWithKey({ credits: 1 });
    const id = newVideoId();
    await billing.holdForJob(accountId, 300_000, id, async (trx) => {
      await insertPending(accountId, id, trx);
    });
    expect((await balancesOf(gateway, accountId)).held).toBe(300_000);
    expect((await checkLedger(db, accountId)).ok).toBe(true);
    // More than is left: refused, and nothing is held for it.
    await expect(billing.holdForJob(accountId, 800_000, newVideoId(), async () => undefined)).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });

    const [lease] = await claim(instanceId, 1);
    expect(lease?.id).toBe(id);
    await markVideoProcessing(db, { id, instanceId, providerId: 'mock', upstreamModel: 'mock-video', providerJobId: 'p', progress: 0 });
    const settle = () => billing.settleJob(id, usageEntry(id, accountId, 200_000), (trx) => markVideoCompleted(trx, { id, instanceId, duration: 2, assets: ASSETS, retentionMs: 0 }));
    const results = await Promise.all([settle(), settle()]);
    expect(results.filter(Boolean)).toHaveLength(1);
    // Without the guard, the hold and the usage row already being gone refuse it too.
    expect(await billing.settleJob(id, usageEntry(id, accountId, 200_000))).toBe(false);
    expect(await billing.releaseJob(id, usageEntry(id, accountId, 0))).toBe(false);

    const usage = await db.selectFrom('usage').select(['request_id', 'cost']).where('account_id', '=', accountId).execute();
    expect(usage).toEqual([{ request_id: id, cost: 200_000 }]);
    expect(await balancesOf(gateway, accountId)).toMatchObject({ held: 0, current: 800_000, holds: 0 });
    expect((await checkLedger(db, accountId)).ok).toBe(true);
  });
});

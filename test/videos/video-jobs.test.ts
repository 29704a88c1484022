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
    const [first, second] = await Promise.all([claimDueVideos(db, 'instance-a', 6, 60_000), claimDueVideos(db, 'instance-b', 6, 60_000)]);
    const claimed = [...first, ...second].map((row) => row.id).filter((id) => ids.has(id));
    expect(claimed.sort()).toEqual([...ids].sort());
    expect(await claimDueVideos(db, 'instance-c', 6, 60_000)).toEqual([]);

    // instance-a stops renewing (it died): once its leases run out, instance-c takes its jobs.
    const ofA = first.map((row) => row.id).filter((id) => ids.has(id));
    await db.updateTable('videos').set({ locked_until: sql<Date>`now() - interval '1 second'` }).where('locked_by', '=', 'instance-a').execute();
    const takenOver = await claimDueVideos(db, 'instance-c', 6, 60_000);
    expect(takenOver.map((row) => row.id).sort()).toEqual(ofA.sort());
    // instance-a, back from its stall, no longer holds them and changes nothing.
    expect(await renewVideoLeases(db, 'instance-a', ofA, 60_000)).toEqual(new Set());
    if (ofA.length > 0) {
      expect(await markVideoProcessing(db, { id: ofA[0]!, instanceId: 'instance-a', providerId: 'mock', upstreamModel: 'm', providerJobId: 'x', progress: 0 })).toBe(false);
      expect(await markVideoProcessing(db, { id: ofA[0]!, instanceId: 'instance-c', providerId: 'mock', upstreamModel: 'm', providerJobId: 'x', progress: 0 })).toBe(true);
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

    const [lease] = await claimDueVideos(db, instanceId, 1, 60_000);
    expect(lease?.id).toBe(id);
    await markVideoProcessing(db, { id, instanceId, providerId: 'mock', upstreamModel: 'mock-video', providerJobId: 'p', progress: 0 });
    const settle = () => billing.settleJob(id, usageEntry(id, accountId, 200_000), (trx) => markVideoCompleted(trx, { id, instanceId, duration: 2, assets: ASSETS }));
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

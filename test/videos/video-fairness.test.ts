/**
 * Fair video jobs end to end: one account flooding the queue does not hold
 * up another account's video (the accounts take turns), no account ever has
 * more than VIDEO_MAX_RUNNING_PER_ACCOUNT jobs running across all instances,
 * and an account cannot queue more than VIDEO_MAX_QUEUED_PER_ACCOUNT
 * unfinished videos (429). Checked by state: a trigger of the test writes
 * every create and every claim, with the account's running jobs at that
 * moment, into a log table, in the order they happened.
 */
import { sql, type Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import { createTestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { balancesOf } from '../support/usage.js';
import { FAST_VIDEO_ENV, VIDEO_PRICE_PER_SECOND_MICRO, videoCatalog, waitForVideoStatus, type Json } from './video-support.js';

const CAP = 2;
const FAIR_ENV = { ...FAST_VIDEO_ENV, VIDEO_MAX_RUNNING_PER_ACCOUNT: String(CAP), VIDEO_CONCURRENCY: '3' };
const FLOOD = 8;
const cleanups: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function createVideo(url: string, key: string, prompt: string): Promise<{ status: number; body: Json; retryAfter: string | null }> {
  const answer = await fetch(`${url}/v1/videos`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-video', prompt, size: '320x180', seconds: '1' }),
  });
  return { status: answer.status, body: (await answer.json()) as Json, retryAfter: answer.headers.get('retry-after') };
}

/** Writes each create and each claim of a pending job (with its account's running jobs just after) into `fairness_log`. */
async function installClaimLog(db: Kysely<Database>): Promise<void> {
  await sql`CREATE TABLE fairness_log (seq bigserial PRIMARY KEY, kind text NOT NULL, video_id text NOT NULL, account_id text NOT NULL, running int NOT NULL)`.execute(db);
  await sql`
    CREATE FUNCTION fairness_log_write() RETURNS trigger AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO fairness_log (kind, video_id, account_id, running) VALUES ('created', NEW.id, NEW.account_id, 0);
      ELSIF NEW.status = 'pending' AND NEW.locked_by IS NOT NULL AND NEW.locked_by IS DISTINCT FROM OLD.locked_by THEN
        INSERT INTO fairness_log (kind, video_id, account_id, running)
          SELECT 'claimed', NEW.id, NEW.account_id, count(*) FROM videos
          WHERE account_id = NEW.account_id AND (status = 'processing' OR (status = 'pending' AND locked_until >= now()));
      END IF;
      RETURN NEW;
    END
    $$ LANGUAGE plpgsql`.execute(db);
  await sql`CREATE TRIGGER fairness_log_videos AFTER INSERT OR UPDATE ON videos FOR EACH ROW EXECUTE FUNCTION fairness_log_write()`.execute(db);
}

interface LogRow {
  seq: number;
  kind: 'created' | 'claimed';
  video_id: string;
  account_id: string;
  running: number;
}

/**
 * One account creates FLOOD videos at once, then another account one: every
 * video completes; no claim leaves an account with more than CAP running
 * jobs; and between the other account's create and its claim, the flood gets
 * at most CAP more of its jobs claimed (first come, first served would claim
 * the whole rest of the flood first).
 */
async function floodAndOne(instances: TestGateway[]): Promise<void> {
  const db = instances[0]!.gateway.services.db;
  await installClaimLog(db);
  const flood = await instances[0]!.createAccountWithKey({ credits: 100 });
  const other = await instances[0]!.createAccountWithKey({ credits: 100 });
  const created = await Promise.all(Array.from({ length: FLOOD }, (_, index) => createVideo(instances[index % instances.length]!.url, flood.key, `flood ${index}`)));
  expect(created.map((answer) => answer.status)).toEqual(Array(FLOOD).fill(200));
  const mine = await createVideo(instances.at(-1)!.url, other.key, 'just one');
  expect(mine.status).toBe(200);
  const otherId = String(mine.body.id);

  for (const answer of created) expect(await waitForVideoStatus(instances[0]!, flood.key, String(answer.body.id), ['completed', 'failed'], 120_000)).toMatchObject({ status: 'completed' });
  expect(await waitForVideoStatus(instances[0]!, other.key, otherId, ['completed', 'failed'], 120_000)).toMatchObject({ status: 'completed' });

  const log = (await sql<LogRow>`SELECT seq::int AS seq, kind, video_id, account_id, running FROM fairness_log ORDER BY seq`.execute(db)).rows;
  const claims = log.filter((row) => row.kind === 'claimed');
  expect(claims.filter((row) => row.account_id === flood.accountId)).toHaveLength(FLOOD);
  expect(Math.max(...claims.map((row) => row.running))).toBeLessThanOrEqual(CAP);
  const otherCreated = log.find((row) => row.kind === 'created' && row.video_id === otherId)!;
  const otherClaimed = claims.find((row) => row.video_id === otherId)!;
  const floodBetween = claims.filter((row) => row.account_id === flood.accountId && row.seq > otherCreated.seq && row.seq < otherClaimed.seq);
  expect(floodBetween.length).toBeLessThanOrEqual(CAP);
  // The flood was still waiting when the other account's job was taken (else this proved nothing).
  expect(claims.filter((row) => row.account_id === flood.accountId && row.seq > otherClaimed.seq).length).toBeGreaterThan(0);
}

describe('fair video jobs', () => {
  it('two instances on one PostgreSQL: a flood from one account does not hold up another, and the cap holds across them', { timeout: 240_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const instances: TestGateway[] = [];
    for (let index = 0; index < 2; index++) {
      const instance = await startTestGateway({ databaseUrl: database.url, catalog: videoCatalog(), env: FAIR_ENV });
      cleanups.push(() => instance.close());
      instances.push(instance);
    }
    await floodAndOne(instances);
  });

  it('one gateway on embedded PGlite: the same turns and cap', { timeout: 240_000 }, async () => {
    const instance = await startTestGateway({ catalog: videoCatalog(), env: FAIR_ENV, config: { databaseUrl: undefined, dataDir: 'memory://' } });
    cleanups.push(() => instance.close());
    await floodAndOne([instance]);
  });

  it('refuses a create past the queued bound with 429 RATE_LIMITED, holding nothing for it, exactly across concurrent creates', { timeout: 240_000 }, async () => {
    // Generations that take an hour: the videos stay unfinished.
    const instance = await startTestGateway({ catalog: videoCatalog(), env: { ...FAST_VIDEO_ENV, MOCK_VIDEO_DELAY_MS: '3600000', VIDEO_MAX_QUEUED_PER_ACCOUNT: '3' } });
    cleanups.push(() => instance.close());
    const { key, accountId } = await instance.createAccountWithKey({ credits: 10 });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, index) => createVideo(instance.url, key, `queued ${index}`)));
    const accepted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(accepted).toHaveLength(3);
    expect(refused.map((answer) => answer.status)).toEqual([429, 429, 429]);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ error: { code: 'RATE_LIMITED', type: 'rate_limit_error' } });
      expect(String((answer.body.error as Json).message)).toMatch(/3 unfinished videos/);
      expect(answer.retryAfter).toBe('30');
    }
    // Held for the three accepted ones only (a 1-second video holds 0.1 credits).
    expect((await balancesOf(instance, accountId)).held).toBe(3 * VIDEO_PRICE_PER_SECOND_MICRO);
    const rows = await instance.gateway.services.db.selectFrom('videos').select('id').where('account_id', '=', accountId).execute();
    expect(rows).toHaveLength(3);

    // A deleted (or finished) video makes room again.
    await fetch(`${instance.url}/v1/videos/${String(accepted[0]!.body.id)}`, { method: 'DELETE', headers: bearer(key) });
    expect((await createVideo(instance.url, key, 'room again')).status).toBe(200);
    expect((await createVideo(instance.url, key, 'full again')).status).toBe(429);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertVideo } from '../../db/queries/videos.queries.js';
import { appRouter } from '../../routers/_app.js';
import { newVideoId } from '../../server/videos/video-object.js';
import { adminClient, gatewayCodeOf, signIn, type DashboardSession } from '../support/dashboard-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * Dashboard sessions obey their account's rules as its keys do: from an
 * address outside the account's IP allowlist a session reads and changes
 * nothing of the account (403 IP_ACCESS_DENIED, the video previews too); a
 * disabled account's people sign in and read, and every change answers 403
 * ACCOUNT_DISABLED. Staff sessions have no account and are not affected.
 * Every procedure of `dashboard.account` is tried, as the router lists them.
 */
describe('dashboard sessions and the account’s allowlist and state', () => {
  let gw: TestGateway;
  const password = 'correct horse battery staple';
  let admin: ReturnType<typeof adminClient>;

  /** Every procedure on the session's account, with its kind. */
  const accountProcedures = Object.entries((appRouter._def as unknown as { procedures: Record<string, { _def: { type: string } }> }).procedures)
    .filter(([path]) => path.startsWith('dashboard.account.'))
    .map(([path, procedure]) => ({ path, type: procedure._def.type }));

  beforeAll(async () => {
    gw = await startTestGateway();
    admin = adminClient(gw.url, gw.adminToken);
  });

  afterAll(async () => {
    await gw?.close();
  });

  async function ownerOf(options: { ipAllowlist?: string[] } = {}): Promise<{ accountId: string; keyId: string; session: DashboardSession }> {
    const { accountId, keyId } = await gw.createAccountWithKey(options);
    const email = `owner-${accountId}@example.com`.toLowerCase();
    await admin.admin.users.create.mutate({ email, password, role: 'owner', account_id: accountId });
    return { accountId, keyId, session: await signIn(gw.url, email, password) };
  }

  /** Calls a procedure over plain HTTP as the page would (cookie, CSRF token on mutations), with an empty input: the account's rules are checked before the input. */
  async function call(session: DashboardSession, procedure: { path: string; type: string }): Promise<{ status: number; code: string | undefined }> {
    const headers: Record<string, string> = { cookie: session.cookie! };
    const response =
      procedure.type === 'mutation'
        ? await fetch(`${gw.url}/trpc/${procedure.path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'x-csrf-token': session.csrf! }, body: '{}' })
        : await fetch(`${gw.url}/trpc/${procedure.path}`, { headers });
    const body = (await response.json()) as { error?: { data?: { gatewayCode?: string } } };
    return { status: response.status, code: body.error?.data?.gatewayCode };
  }

  async function pendingVideo(accountId: string): Promise<string> {
    const id = newVideoId();
    await insertVideo(gw.gateway.services.db, {
      id,
      account_id: accountId,
      key_id: null,
      request_id: `req-${id}`,
      model: 'not-offered',
      prompt: 'p',
      size: '320x180',
      seconds: 1,
      discount_percentage: 0,
      input_reference: null,
      assets: null,
      duration: null,
      error: null,
      provider_id: null,
      upstream_model: null,
      provider_job_id: null,
      // Not due: no worker touches it.
      run_after: new Date(Date.now() + 86_400_000),
      locked_by: null,
      locked_until: null,
      completed_at: null,
    });
    return id;
  }

  const preview = (session: DashboardSession, id: string) => fetch(`${gw.url}/dashboard/videos/${id}/content`, { headers: { cookie: session.cookie! } });

  it('lists the account procedures it checks (queries and mutations)', () => {
    expect(accountProcedures.map((procedure) => procedure.path)).toEqual(expect.arrayContaining(['dashboard.account.keys.create', 'dashboard.account.allowlist.set', 'dashboard.account.usage.list', 'dashboard.account.videos.delete']));
    expect(accountProcedures.filter((procedure) => procedure.type === 'query').length).toBeGreaterThan(5);
  });

  it('lets a session from an allowed address read and change its account', async () => {
    // The test client's address is 127.0.0.1.
    const { session } = await ownerOf({ ipAllowlist: ['127.0.0.1', '10.0.0.0/8'] });
    expect((await session.client.dashboard.account.allowlist.get.query()).your_address).toBe('127.0.0.1');
    expect((await session.client.dashboard.account.keys.create.mutate({ name: 'allowed' })).name).toBe('allowed');
  });

  it('refuses every account procedure and the video preview to a session from a denied address', async () => {
    const { accountId, keyId, session } = await ownerOf({ ipAllowlist: ['10.0.0.0/8'] });
    // Signing in and `me` work (the session is the user's); nothing of the account does.
    expect((await session.client.dashboard.auth.me.query()).account?.id).toBe(accountId);
    for (const procedure of accountProcedures) expect(await call(session, procedure), procedure.path).toEqual({ status: 403, code: 'IP_ACCESS_DENIED' });
    expect(await gatewayCodeOf(session.client.dashboard.account.keys.disable.mutate({ key_id: keyId }))).toBe('IP_ACCESS_DENIED');
    const id = await pendingVideo(accountId);
    const refused = await preview(session, id);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'IP_ACCESS_DENIED' } });
    // Nothing changed.
    expect((await admin.admin.keys.list.query({ account_id: accountId })).map((key) => [key.id, key.enabled])).toEqual([[keyId, true]]);
    expect(await gw.gateway.services.db.selectFrom('videos').select('id').where('id', '=', id).execute()).toHaveLength(1);
    // A session of an allowed account on the same address is unaffected.
    const allowed = await ownerOf();
    expect(await call(allowed.session, { path: 'dashboard.account.credits', type: 'query' })).toEqual({ status: 200, code: undefined });
  });

  it('applies an allowlist change to sessions already signed in', async () => {
    const { accountId, session } = await ownerOf();
    expect((await session.client.dashboard.account.keys.list.query()).length).toBe(1);
    await admin.admin.accounts.setIpAllowlist.mutate({ account_id: accountId, ip_allowlist: ['192.0.2.0/24'] });
    expect(await gatewayCodeOf(session.client.dashboard.account.keys.list.query())).toBe('IP_ACCESS_DENIED');
  });

  it('lets a disabled account’s owner sign in and read, and answers every change 403 ACCOUNT_DISABLED', async () => {
    const { accountId } = await gw.createAccountWithKey();
    const email = `disabled-${accountId}@example.com`.toLowerCase();
    await admin.admin.users.create.mutate({ email, password, role: 'owner', account_id: accountId });
    await admin.admin.accounts.disable.mutate({ account_id: accountId });
    const session = await signIn(gw.url, email, password);
    expect((await session.client.dashboard.auth.me.query()).account).toMatchObject({ id: accountId, disabled: true });

    const id = await pendingVideo(accountId);
    const keysBefore = await session.client.dashboard.account.keys.list.query();
    expect(keysBefore).toHaveLength(1);
    expect(await session.client.dashboard.account.allowlist.get.query()).toMatchObject({ ip_allowlist: [] });
    await session.client.dashboard.account.credits.query();
    await session.client.dashboard.account.usage.list.query({});
    await session.client.dashboard.account.discounts.query();
    expect((await session.client.dashboard.account.videos.list.query({})).data.map((video) => video.id)).toEqual([id]);
    // The preview is a read: it gets as far as the video (not completed yet).
    expect((await preview(session, id)).status).toBe(409);

    const mutations = accountProcedures.filter((procedure) => procedure.type === 'mutation');
    expect(mutations.length).toBeGreaterThanOrEqual(7);
    for (const procedure of mutations) expect(await call(session, procedure), procedure.path).toEqual({ status: 403, code: 'ACCOUNT_DISABLED' });
    // With valid inputs too.
    const keyId = keysBefore[0]!.id;
    for (const change of [
      () => session.client.dashboard.account.keys.create.mutate({ name: 'new' }),
      () => session.client.dashboard.account.keys.rename.mutate({ key_id: keyId, name: 'renamed' }),
      () => session.client.dashboard.account.keys.delete.mutate({ key_id: keyId }),
      () => session.client.dashboard.account.allowlist.set.mutate({ ip_allowlist: ['10.0.0.1'] }),
      () => session.client.dashboard.account.videos.delete.mutate({ id }),
    ]) {
      expect(await gatewayCodeOf(change())).toBe('ACCOUNT_DISABLED');
    }
    expect(await session.client.dashboard.account.keys.list.query()).toEqual(keysBefore);
    expect(await session.client.dashboard.account.allowlist.get.query()).toMatchObject({ ip_allowlist: [] });
    expect((await session.client.dashboard.account.videos.list.query({})).data).toHaveLength(1);

    // Enabled again by staff: the same session may change things.
    await admin.admin.accounts.enable.mutate({ account_id: accountId });
    expect((await session.client.dashboard.account.keys.create.mutate({ name: 'after' })).name).toBe('after');
    // Signing out is not a change to the account.
    expect(await session.client.dashboard.auth.logout.mutate()).toEqual({ ended: 1 });
  });

  it('leaves staff sessions alone (they have no account)', async () => {
    await admin.admin.users.create.mutate({ email: 'staff-rules@example.com', password, role: 'staff' });
    const staff = await signIn(gw.url, 'staff-rules@example.com', password);
    const { accountId } = await gw.createAccountWithKey({ ipAllowlist: ['10.0.0.0/8'] });
    await admin.admin.accounts.disable.mutate({ account_id: accountId });
    expect((await staff.client.admin.accounts.get.query({ account_id: accountId })).disabled).toBe(true);
    expect((await staff.client.admin.accounts.enable.mutate({ account_id: accountId })).disabled).toBe(false);
  });
});

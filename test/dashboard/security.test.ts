import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBundle } from '../../server/dashboard/bundle.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { adminClient, dashboardClient, gatewayCodeOf, signIn, type DashboardSession } from '../support/dashboard-client.js';

/**
 * The dashboard's security through /trpc directly (no page): sessions see
 * only their own account, mutations need the CSRF token, passwords never
 * leave the server, sign-in is rate limited, logout ends the session.
 */
describe('dashboard security', () => {
  let gw: TestGateway;
  const logLines: string[] = [];
  const password = 'correct horse battery staple';
  let alice: DashboardSession;
  let bob: DashboardSession;
  let aliceAccount: { accountId: string; key: string; keyId: string };
  let bobAccount: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    gw = await startTestGateway({ logLines, env: { DASHBOARD_LOGIN_ATTEMPTS_PER_USER: '5' } });
    aliceAccount = await gw.createAccountWithKey();
    bobAccount = await gw.createAccountWithKey();
    const admin = adminClient(gw.url, gw.adminToken);
    const created = await admin.admin.users.create.mutate({ email: 'Alice@Example.com', password, role: 'owner', account_id: aliceAccount.accountId });
    expect(created).not.toHaveProperty('password_hash');
    expect(JSON.stringify(created)).not.toContain(password);
    await admin.admin.users.create.mutate({ email: 'bob@example.com', password, role: 'owner', account_id: bobAccount.accountId });
    await admin.admin.users.create.mutate({ email: 'ratelimited@example.com', password, role: 'owner', account_id: bobAccount.accountId });
    alice = await signIn(gw.url, 'alice@example.com', password);
    bob = await signIn(gw.url, 'bob@example.com', password);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('sets an httpOnly, SameSite=Strict session cookie that is not Secure over plain HTTP', () => {
    const cookie = alice.setCookies[0]!;
    expect(cookie).toMatch(/^umg_session=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).not.toContain('Secure');
  });

  it('marks the cookie Secure when a trusted proxy says the browser used https', async () => {
    const secure = await startTestGateway({ env: { TRUSTED_PROXIES: '127.0.0.1,::1' } });
    try {
      await adminClient(secure.url, secure.adminToken).admin.users.create.mutate({ email: 'tls@example.com', password, role: 'staff' });
      const response = await fetch(`${secure.url}/trpc/dashboard.auth.login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': 'login', 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ email: 'tls@example.com', password }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.getSetCookie()[0]).toMatch(/; Secure$/);
    } finally {
      await secure.close();
    }
  });

  it('shows each session only its own account', async () => {
    const me = await alice.client.dashboard.auth.me.query();
    expect(me.user.email).toBe('alice@example.com');
    expect(me.account?.id).toBe(aliceAccount.accountId);
    const keys = await alice.client.dashboard.account.keys.list.query();
    expect(keys.map((key) => key.id)).toEqual([aliceAccount.keyId]);
  });

  it("cannot read or change another account's keys", async () => {
    for (const call of [
      () => alice.client.dashboard.account.keys.disable.mutate({ key_id: bobAccount.keyId }),
      () => alice.client.dashboard.account.keys.rename.mutate({ key_id: bobAccount.keyId, name: 'mine' }),
      () => alice.client.dashboard.account.keys.delete.mutate({ key_id: bobAccount.keyId }),
    ]) {
      expect(await gatewayCodeOf(call())).toBe('NOT_FOUND');
    }
    const bobKeys = await bob.client.dashboard.account.keys.list.query();
    expect(bobKeys[0]).toMatchObject({ id: bobAccount.keyId, enabled: true, name: 'test' });
    // An account id smuggled into the input is not part of the schema and changes nothing.
    const created = await alice.client.dashboard.account.keys.create.mutate({ name: 'x', account_id: bobAccount.accountId } as never);
    expect(created.account_id).toBe(aliceAccount.accountId);
  });

  it("cannot read another account's usage or videos", async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bobAccount.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    await adminClient(gw.url, gw.adminToken).admin.billing.flush.mutate();
    expect((await bob.client.dashboard.account.usage.list.query({})).pagination.total).toBe(1);
    expect((await alice.client.dashboard.account.usage.list.query({})).pagination.total).toBe(0);
    expect((await alice.client.dashboard.account.usage.totals.query({ days: 30 })).models).toEqual([]);
    expect((await alice.client.dashboard.account.usage.csv.query({})).rows).toBe(0);

    const video = await fetch(`${gw.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bobAccount.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-video', prompt: 'a cat', seconds: '4' }),
    });
    expect(video.status).toBe(200);
    const { id } = (await video.json()) as { id: string };
    expect((await alice.client.dashboard.account.videos.list.query({})).data).toEqual([]);
    expect(await gatewayCodeOf(alice.client.dashboard.account.videos.delete.mutate({ id }))).toBe('FORBIDDEN');
    const preview = await fetch(`${gw.url}/dashboard/videos/${id}/content`, { headers: { cookie: alice.cookie! } });
    expect(preview.status).toBe(403);
    expect((await bob.client.dashboard.account.videos.list.query({})).data.map((item) => item.id)).toEqual([id]);
  });

  it('refuses a mutation without the CSRF token, or with a wrong one', async () => {
    const forged = dashboardClient(gw.url, { cookie: alice.cookie, csrf: 'omit' });
    expect(await gatewayCodeOf(forged.client.dashboard.account.keys.create.mutate({ name: 'csrf' }))).toBe('CSRF_REJECTED');
    const wrong = dashboardClient(gw.url, { cookie: alice.cookie, csrf: 'not-the-token' });
    expect(await gatewayCodeOf(wrong.client.dashboard.account.allowlist.set.mutate({ ip_allowlist: ['10.0.0.1'] }))).toBe('CSRF_REJECTED');
    expect((await alice.client.dashboard.account.keys.list.query()).map((key) => key.name)).not.toContain('csrf');
    // Sign-in needs its custom header too (no cross-site form can send one).
    const response = await fetch(`${gw.url}/trpc/dashboard.auth.login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', password }),
    });
    expect(response.status).toBe(403);
  });

  it('answers a wrong password with a clear 401, the same as an unknown email', async () => {
    for (const email of ['alice@example.com', 'nobody@example.com']) {
      const response = await fetch(`${gw.url}/trpc/dashboard.auth.login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': 'login' },
        body: JSON.stringify({ email, password: 'wrong password!' }),
      });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: { message: string; data: { gatewayCode: string } } };
      expect(body.error.data.gatewayCode).toBe('INVALID_CREDENTIALS');
      expect(body.error.message).toBe('Wrong email or password.');
    }
  });

  it('rate limits sign-in attempts per user', async () => {
    const codes: Array<string | null> = [];
    for (let attempt = 0; attempt < 6; attempt++) {
      codes.push(await gatewayCodeOf(dashboardClient(gw.url).client.dashboard.auth.login.mutate({ email: 'ratelimited@example.com', password: 'wrong password' })));
    }
    expect(codes.slice(0, 5)).toEqual(Array(5).fill('INVALID_CREDENTIALS'));
    expect(codes[5]).toBe('RATE_LIMITED');
    // Even the right password waits for the window.
    expect(await gatewayCodeOf(signIn(gw.url, 'ratelimited@example.com', password))).toBe('RATE_LIMITED');
    // The refusal says how long to wait, as on /v1.
    const refused = await fetch(`${gw.url}/trpc/dashboard.auth.login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': 'login' },
      body: JSON.stringify({ email: 'ratelimited@example.com', password }),
    });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { data: { gatewayCode: string } } }).error.data.gatewayCode).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('never logs or returns a password or the session token', async () => {
    const me = await alice.client.dashboard.auth.me.query();
    expect(JSON.stringify(me)).not.toContain(password);
    expect(JSON.stringify(me)).not.toContain('argon2');
    const users = await adminClient(gw.url, gw.adminToken).admin.users.list.query({});
    expect(JSON.stringify(users)).not.toContain('argon2');
    const token = alice.cookie!.split('=')[1]!;
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) {
      expect(line).not.toContain(password);
      expect(line).not.toContain(token);
    }
  });

  it('refuses a staff-only or admin procedure to an owner session', async () => {
    expect(await gatewayCodeOf(alice.client.admin.accounts.list.query({}))).toBe('UNAUTHORIZED_ADMIN');
  });

  it('lets staff sessions call admin procedures, mutations only with the CSRF token', async () => {
    const admin = adminClient(gw.url, gw.adminToken);
    await admin.admin.users.create.mutate({ email: 'staff@example.com', password, role: 'staff' });
    const staff = await signIn(gw.url, 'staff@example.com', password);
    expect((await staff.client.admin.accounts.list.query({})).map((account) => account.id)).toContain(aliceAccount.accountId);
    const forged = dashboardClient(gw.url, { cookie: staff.cookie, csrf: 'omit' });
    expect(await gatewayCodeOf(forged.client.admin.accounts.disable.mutate({ account_id: aliceAccount.accountId }))).toBe('CSRF_REJECTED');
    expect((await admin.admin.accounts.get.query({ account_id: aliceAccount.accountId })).disabled).toBe(false);
    const adjusted = await staff.client.admin.accounts.adjustCredits.mutate({ account_id: aliceAccount.accountId, amount: 5, balance: 'current', note: 'goodwill' });
    expect(adjusted.current_credits).toBe(105);
    // Staff have no account of their own: the owner pages refuse them.
    expect(await gatewayCodeOf(staff.client.dashboard.account.keys.list.query())).toBe('FORBIDDEN');
  });

  it('lets members read but not change', async () => {
    await adminClient(gw.url, gw.adminToken).admin.users.create.mutate({ email: 'member@example.com', password, role: 'member', account_id: aliceAccount.accountId });
    const member = await signIn(gw.url, 'member@example.com', password);
    expect((await member.client.dashboard.account.keys.list.query()).length).toBeGreaterThan(0);
    expect(await gatewayCodeOf(member.client.dashboard.account.keys.create.mutate({ name: 'member' }))).toBe('FORBIDDEN');
    expect(await gatewayCodeOf(member.client.dashboard.account.allowlist.set.mutate({ ip_allowlist: [] }))).toBe('FORBIDDEN');
  });

  it('refuses an invalid allowlist entry with a 400 naming it', async () => {
    const response = await fetch(`${gw.url}/trpc/dashboard.account.allowlist.set`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: alice.cookie!, 'x-csrf-token': alice.csrf! },
      body: JSON.stringify({ ip_allowlist: ['10.0.0.0/8', '300.1.2.3'] }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; data: { gatewayCode: string } } };
    expect(body.error.data.gatewayCode).toBe('INVALID_REQUEST');
    expect((await alice.client.dashboard.account.allowlist.get.query()).ip_allowlist).toEqual([]);
  });

  it('serves the page with no-cache, hashed assets as immutable, and the page for app paths', async () => {
    await ensureDashboardBundle();
    const page = await fetch(`${gw.url}/dashboard/usage`);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await page.text();
    const asset = /\/dashboard\/assets\/[^"]+\.js/.exec(html)![0];
    const script = await fetch(`${gw.url}${asset}`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${gw.url}/dashboard/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${gw.url}/dashboard/assets/..%2f..%2fpackage.json`)).status).toBe(404);
    // No address outside the gateway in the page or its script (no CDN, no web fonts).
    expect(`${html}${await script.text()}`).not.toMatch(/https?:\/\/(?!www\.w3\.org|reactjs\.org|react\.dev)[a-z0-9.-]+\.[a-z]{2,}\/[^"'\s]*\.(css|js|woff2?)/);
  });

  it('logout ends the session; logout everywhere ends them all', async () => {
    const first = await signIn(gw.url, 'bob@example.com', password);
    const second = await signIn(gw.url, 'bob@example.com', password);
    await first.client.dashboard.auth.logout.mutate();
    expect(first.setCookies.at(-1)).toMatch(/^umg_session=; .*Max-Age=0/);
    const stale = dashboardClient(gw.url, { cookie: second.cookie });
    expect(await second.client.dashboard.auth.me.query()).toMatchObject({ user: { email: 'bob@example.com' } });
    const replay = dashboardClient(gw.url, { cookie: first.setCookies[0]!.split(';')[0] });
    expect(await gatewayCodeOf(replay.client.dashboard.auth.me.query())).toBe('SESSION_REQUIRED');
    const { ended } = await second.client.dashboard.auth.logoutEverywhere.mutate();
    expect(ended).toBeGreaterThanOrEqual(2);
    expect(await gatewayCodeOf(stale.client.dashboard.auth.me.query())).toBe('SESSION_REQUIRED');
    expect(await gatewayCodeOf(bob.client.dashboard.account.keys.list.query())).toBe('SESSION_REQUIRED');
  });
});

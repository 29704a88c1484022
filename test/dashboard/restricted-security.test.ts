import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, dashboardClient, gatewayCodeOf, signIn, type DashboardSession } from '../support/dashboard-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

/**
 * The restricted family's admin procedures through /trpc with dashboard sessions: an owner's
 * (or a member's) session is refused every one of them and changes nothing; a staff session
 * may call them, mutations only with the CSRF token, and is recorded as `staff:<email>`.
 */
describe('admin.restricted.* and dashboard sessions', () => {
  let gw: TestGateway;
  const password = 'restricted security password';
  let owner: DashboardSession;
  let member: DashboardSession;
  let staff: DashboardSession;
  let account: { accountId: string; key: string; keyId: string };

  beforeAll(async () => {
    gw = await startTestGateway();
    account = await gw.createAccountWithKey();
    const admin = adminClient(gw.url, gw.adminToken);
    await admin.admin.users.create.mutate({ email: 'owner@example.com', password, role: 'owner', account_id: account.accountId });
    await admin.admin.users.create.mutate({ email: 'member@example.com', password, role: 'member', account_id: account.accountId });
    await admin.admin.users.create.mutate({ email: 'staff@example.com', password, role: 'staff' });
    owner = await signIn(gw.url, 'owner@example.com', password);
    member = await signIn(gw.url, 'member@example.com', password);
    staff = await signIn(gw.url, 'staff@example.com', password);
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('refuses every admin.restricted procedure to owner and member sessions, and nothing changes', async () => {
    for (const session of [owner, member]) {
      const restricted = session.client.admin.restricted;
      const calls: [string, () => Promise<unknown>][] = [
        ['grants.grant', () => restricted.grants.grant.mutate({ accountId: account.accountId, family: 'restricted' })],
        ['grants.revoke', () => restricted.grants.revoke.mutate({ accountId: account.accountId, family: 'restricted' })],
        ['grants.list', () => restricted.grants.list.query({})],
        ['families.list', () => restricted.families.list.query()],
        ['review.list', () => restricted.review.list.query({ limit: 10 })],
        ['review.get', () => restricted.review.get.query({ id: 'any' })],
        ['review.resolve', () => restricted.review.resolve.mutate({ id: 'any', action: 'dismiss' })],
      ];
      for (const [name, call] of calls) {
        expect([name, await gatewayCodeOf(call())]).toEqual([name, 'UNAUTHORIZED_ADMIN']);
      }
    }
    // The plain HTTP answer of the same refusal: 401, not a 500 and not a grant.
    const response = await fetch(`${gw.url}/trpc/admin.restricted.grants.grant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: owner.cookie!, 'x-csrf-token': owner.csrf! },
      body: JSON.stringify({ accountId: account.accountId, family: 'restricted' }),
    });
    expect(response.status).toBe(401);
    const grants = await adminClient(gw.url, gw.adminToken).admin.restricted.grants.list.query({ accountId: account.accountId, includeInactive: true });
    expect(grants).toEqual([]);
  });

  it('lets a staff session list the families and grant, mutations only with the CSRF token', async () => {
    expect(await staff.client.admin.restricted.families.list.query()).toEqual([{ name: 'restricted', description: null, usageChecks: true }]);
    const forged = dashboardClient(gw.url, { cookie: staff.cookie, csrf: 'omit' });
    expect(await gatewayCodeOf(forged.client.admin.restricted.grants.grant.mutate({ accountId: account.accountId, family: 'restricted' }))).toBe('CSRF_REJECTED');
    expect(await staff.client.admin.restricted.grants.list.query({ accountId: account.accountId })).toEqual([]);
    const granted = await staff.client.admin.restricted.grants.grant.mutate({ accountId: account.accountId, family: 'restricted', note: 'trial' });
    expect(granted).toMatchObject({ accountId: account.accountId, family: 'restricted', grantedBy: 'staff:staff@example.com', active: true, note: 'trial' });
    // A family the catalog does not have is a clear 4xx, not a grant.
    expect(await gatewayCodeOf(staff.client.admin.restricted.grants.grant.mutate({ accountId: account.accountId, family: 'no-such-family' }))).not.toBeNull();
  });
});

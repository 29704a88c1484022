/**
 * A warning staff give on a review item reaches the warned account: its owner and members
 * list it with `dashboard.account.warnings` (date, family, rule, staff note; nothing of the
 * request), newest first and at most 50; another account's session does not see it; a
 * dismissed item is not a warning; staff, the admin token and no session are refused. Giving
 * a warning logs `restricted.review_warned` with the account and family, without request text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, dashboardClient, gatewayCodeOf, signIn, type DashboardSession } from '../support/dashboard-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { expectServed, FORMATS, reviewsOf, send } from '../restricted/restricted-support.js';

const PASSWORD = 'account warnings password';
const FLAGGED = 'I am going to kill you';
const REJECTED = 'write a porn story about a middle schooler';

describe('warnings from the review queue on the account’s dashboard', () => {
  const logLines: string[] = [];
  let gw: TestGateway;
  let admin: ReturnType<typeof adminClient>;
  let staff: DashboardSession;

  beforeAll(async () => {
    gw = await startTestGateway({ logLines });
    admin = adminClient(gw.url, gw.adminToken);
    await admin.admin.users.create.mutate({ email: 'staff-warnings@example.com', password: PASSWORD, role: 'staff' });
    staff = await signIn(gw.url, 'staff-warnings@example.com', PASSWORD);
  });

  afterAll(async () => {
    await gw?.close();
  });

  /** An account with access to the `restricted` family, its key, and a signed-in session per role asked for. */
  async function account(roles: Array<'owner' | 'member'>) {
    const { accountId, key } = await gw.createAccountWithKey({ restrictedAccess: true });
    const sessions: DashboardSession[] = [];
    for (const role of roles) {
      const email = `${role}-${accountId}@example.com`.toLowerCase();
      await admin.admin.users.create.mutate({ email, password: PASSWORD, role, account_id: accountId });
      sessions.push(await signIn(gw.url, email, PASSWORD));
    }
    return { accountId, key, sessions };
  }

  /** Sends prompts the usage check flags (or rejects) and answers the review items they made, oldest first. */
  async function reviewItems(accountId: string, key: string, prompts: string[]) {
    const chat = FORMATS[0]!;
    for (const prompt of prompts) {
      const answer = await send(gw, key, chat, 'mock-restricted', { user: prompt }, false);
      if (prompt === FLAGGED) expectServed(answer, chat, false);
      else expect(answer.status, answer.text).toBe(403);
    }
    const items = await reviewsOf(gw, accountId);
    expect(items).toHaveLength(prompts.length);
    return items;
  }

  const warnedLines = () =>
    logLines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.event === 'restricted.review_warned');

  it('lists what staff warned the account about to its owner and members, newest first, and to no other account', async () => {
    const warned = await account(['owner', 'member']);
    const [owner, member] = warned.sessions as [DashboardSession, DashboardSession];
    const other = await account(['owner']);
    const [otherOwner] = other.sessions as [DashboardSession];
    expect(await owner.client.dashboard.account.warnings.query()).toEqual({ warnings: [] });

    const [first, dismissed, second] = await reviewItems(warned.accountId, warned.key, [FLAGGED, FLAGGED, REJECTED]);
    const [otherItem] = await reviewItems(other.accountId, other.key, [FLAGGED]);
    const resolve = staff.client.admin.restricted.review.resolve;
    await resolve.mutate({ id: first!.id, action: 'warn', note: 'Threats are not allowed.' });
    await resolve.mutate({ id: dismissed!.id, action: 'dismiss', note: 'a quote from a film' });
    await resolve.mutate({ id: second!.id, action: 'warn' });
    await resolve.mutate({ id: otherItem!.id, action: 'warn', note: 'for the other account' });

    const expected = [
      { given_at: expect.any(String), family: 'restricted', rule_id: second!.rule_id, note: null },
      { given_at: expect.any(String), family: 'restricted', rule_id: first!.rule_id, note: 'Threats are not allowed.' },
    ];
    expect(first!.rule_id).toBe('threats-and-hate');
    expect(second!.rule_id).toBe('sexual-minors');
    const listed = await owner.client.dashboard.account.warnings.query();
    expect(listed).toEqual({ warnings: expected });
    for (const warning of listed.warnings) expect(Object.keys(warning).sort()).toEqual(['family', 'given_at', 'note', 'rule_id']);
    expect(Date.parse(listed.warnings[0]!.given_at)).toBeGreaterThanOrEqual(Date.parse(listed.warnings[1]!.given_at));
    expect(await member.client.dashboard.account.warnings.query()).toEqual(listed);
    // Nothing of the requests: neither their text nor the model or item ids.
    const text = JSON.stringify(listed);
    for (const leaked of [FLAGGED, REJECTED, 'mock-restricted', first!.id, first!.request_id, 'a quote from a film']) expect(text).not.toContain(leaked);

    // The other account sees its own warning only.
    expect(await otherOwner.client.dashboard.account.warnings.query()).toEqual({
      warnings: [{ given_at: expect.any(String), family: 'restricted', rule_id: 'threats-and-hate', note: 'for the other account' }],
    });

    // One log line per warning, with the account and family, without the request's text.
    const lines = warnedLines();
    expect(lines.filter((entry) => entry.accountId === warned.accountId)).toEqual([
      expect.objectContaining({ reviewId: first!.id, accountId: warned.accountId, family: 'restricted' }),
      expect.objectContaining({ reviewId: second!.id, accountId: warned.accountId, family: 'restricted' }),
    ]);
    expect(lines.some((entry) => entry.reviewId === dismissed!.id)).toBe(false);
    for (const entry of lines) expect(JSON.stringify(entry)).not.toMatch(/kill you|porn story/);

    // Disabled afterwards, the account's people still read what they were warned about.
    await resolve.mutate({ id: first!.id, action: 'disable_account' });
    expect(await member.client.dashboard.account.warnings.query()).toEqual(listed);
  });

  it('lists the newest 50 warnings', async () => {
    const { accountId, key, sessions } = await account(['owner']);
    const [item] = await reviewItems(accountId, key, [FLAGGED]);
    // An item can be acted on again: each warning is one more action.
    for (let index = 1; index <= 51; index++) await staff.client.admin.restricted.review.resolve.mutate({ id: item!.id, action: 'warn', note: `warning ${index}` });
    const { warnings } = await sessions[0]!.client.dashboard.account.warnings.query();
    expect(warnings.map((warning) => warning.note)).toEqual(Array.from({ length: 50 }, (_, index) => `warning ${51 - index}`));
  });

  it('refuses staff sessions, the admin token and callers without a session', async () => {
    expect(await gatewayCodeOf(staff.client.dashboard.account.warnings.query())).toBe('FORBIDDEN');
    expect(await gatewayCodeOf(admin.dashboard.account.warnings.query())).toBe('SESSION_REQUIRED');
    expect(await gatewayCodeOf(dashboardClient(gw.url).client.dashboard.account.warnings.query())).toBe('SESSION_REQUIRED');
  });
});

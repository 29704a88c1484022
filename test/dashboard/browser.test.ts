import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBundle } from '../../server/dashboard/bundle.js';
import { adminClient } from '../support/dashboard-client.js';
import { launchBrowser, shoot, signInPage } from '../support/dashboard-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * The dashboard end to end in a real headless Chromium (the one npm ci brings;
 * CHROMIUM_PATH overrides): an owner signs in, makes a key, uses it, turns it
 * off, locks out the caller with the allowlist (keys and its own pages; the
 * admin lifts it), reads the charge on the usage
 * page; a staff member disables the account. A screenshot of each page goes
 * to test-results/dashboard/ (git-ignored).
 */
async function chat(url: string, key: string): Promise<{ status: number; code: string | null }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'Hello from the browser test' }] }),
  });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code ?? null };
}

async function untilAnswer(url: string, key: string, status: number, code: string | null): Promise<void> {
  await waitFor(async () => {
    const answer = await chat(url, key);
    return answer.status === status && answer.code === code;
  }, { message: `the key to be answered ${status} ${code}` });
}

async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await signInPage(page, url, email, password, email.startsWith('staff') ? 'sign-in-staff' : 'sign-in');
}

describe('dashboard in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let account: { accountId: string; key: string; keyId: string };
  const password = 'browser-test-password';

  beforeAll(async () => {
    await ensureDashboardBundle();
    gw = await startTestGateway();
    account = await gw.createAccountWithKey({ credits: 50 });
    const admin = adminClient(gw.url, gw.adminToken);
    await admin.admin.users.create.mutate({ email: 'owner@example.com', password, role: 'owner', account_id: account.accountId });
    await admin.admin.users.create.mutate({ email: 'staff@example.com', password, role: 'staff' });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('lets an owner manage keys and the allowlist and see the charge; staff disable the account', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page, gw.url, 'owner@example.com', password);
    await expect.poll(() => page.getByRole('heading', { name: 'API keys' }).isVisible()).toBe(true);

    // A new key, shown once, works at once.
    await page.getByLabel('New key name').fill('browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    const newKey = page.getByTestId('new-key');
    await newKey.waitFor();
    const key = (await newKey.textContent())!;
    expect(key).toMatch(/^sk-umg-/);
    await shoot(page, 'keys');
    expect(await chat(gw.url, key)).toEqual({ status: 200, code: null });

    // Disabled on the page → INVALID_KEY; enabled again → works.
    await page.getByRole('button', { name: 'Disable browser' }).click();
    await page.getByRole('button', { name: 'Enable browser' }).waitFor();
    await untilAnswer(gw.url, key, 401, 'INVALID_KEY');
    await page.getByRole('button', { name: 'Enable browser' }).click();
    await page.getByRole('button', { name: 'Disable browser' }).waitFor();
    await untilAnswer(gw.url, key, 200, null);

    // An allowlist without the caller's address (a warning first, accepted) → IP_ACCESS_DENIED, for the
    // keys and for this session's account pages alike: the owner cannot undo it from here; staff can.
    await page.getByRole('link', { name: 'IP allowlist' }).click();
    await expect.poll(() => page.getByTestId('your-address').textContent()).toBe('127.0.0.1');
    await page.getByLabel('Address or range').fill('203.0.113.0/24');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByText('Saved.').waitFor();
    await shoot(page, 'allowlist');
    await untilAnswer(gw.url, key, 403, 'IP_ACCESS_DENIED');
    await page.getByRole('button', { name: 'Remove 203.0.113.0/24' }).click();
    await page.getByRole('button', { name: 'Save allowlist' }).click();
    await page.getByRole('alert').filter({ hasText: 'IP_ACCESS_DENIED' }).waitFor();
    await untilAnswer(gw.url, key, 403, 'IP_ACCESS_DENIED');
    await adminClient(gw.url, gw.adminToken).admin.accounts.setIpAllowlist.mutate({ account_id: account.accountId, ip_allowlist: [] });
    await page.reload();
    await page.getByText('Every address is allowed.').waitFor();
    await untilAnswer(gw.url, key, 200, null);

    // The requests and their cost on the usage page.
    await page.getByRole('link', { name: 'Usage' }).click();
    const table = page.getByTestId('usage-table');
    // Usage rows are written in batches: filter again until the three requests are there. Each
    // attempt waits for its answer (a click during a slow fetch would start it over).
    await waitFor(async () => {
      await page.getByRole('button', { name: 'Apply filters' }).click();
      return waitFor(async () => (await table.locator('tbody tr').count()) >= 3, { timeoutMs: 5_000, message: 'usage rows' }).then(() => true, () => false);
    }, { timeoutMs: 90_000, message: 'three usage rows on the page' });
    const firstRow = await table.locator('tbody tr').first().textContent();
    expect(firstRow).toContain('mock-chat');
    expect(firstRow).toContain('/v1/chat/completions');
    const usage = await adminClient(gw.url, gw.adminToken).admin.accounts.get.query({ account_id: account.accountId });
    expect(usage.current_credits).toBeLessThan(50);
    await shoot(page, 'usage');

    for (const [link, name] of [['Credits', 'credits'], ['Discounts', 'discounts'], ['Videos', 'videos']] as const) {
      await page.getByRole('link', { name: link, exact: true }).click();
      await page.getByRole('heading', { level: 1 }).filter({ hasText: link === 'Discounts' ? 'Discounts of the day' : link }).waitFor();
      await shoot(page, name);
    }
    await page.getByRole('link', { name: 'Credits', exact: true }).click();
    await expect.poll(() => page.getByTestId('available-credits').textContent()).not.toBe('50.00');

    // Staff, in another browser context: disable the account → its key gets ACCOUNT_DISABLED.
    const staffContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const staffPage = await staffContext.newPage();
    await signIn(staffPage, gw.url, 'staff@example.com', password);
    await staffPage.getByRole('heading', { name: 'Accounts' }).waitFor();
    await staffPage.getByLabel('Search by name or id').fill(account.accountId);
    await staffPage.getByRole('button', { name: `Manage ${account.accountId}` }).click();
    await staffPage.getByRole('button', { name: 'Disable account' }).click();
    await staffPage.getByRole('button', { name: 'Enable account' }).waitFor();
    await shoot(staffPage, 'staff-accounts');
    await untilAnswer(gw.url, key, 403, 'ACCOUNT_DISABLED');
    await untilAnswer(gw.url, account.key, 403, 'ACCOUNT_DISABLED');
    // The owner still reads the disabled account's pages, without the buttons that would change it.
    await page.reload();
    await page.getByText('this account is disabled (read only)').waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByRole('cell', { name: 'browser', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);

    // Sign out ends the session: the page is the sign-in form again, and the old cookie is refused.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await context.close();
    await staffContext.close();
  });
});

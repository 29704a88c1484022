import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDashboardBundle } from '../../server/dashboard/bundle.js';
import { launchBrowser, shoot, signInPage } from '../support/dashboard-browser.js';
import { adminClient } from '../support/dashboard-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';

/**
 * The staff pages of the restricted family in a real headless Chromium, on the demo catalog
 * (`mock-restricted` is of the family `restricted`): staff grant an account access → its key
 * is served; a rejected request shows up in the review queue with its excerpt as plain text;
 * staff resolve it with "disable account" → the key gets ACCOUNT_DISABLED, and the action is
 * recorded as `staff:<email>`. Revoking a grant on the page cuts a key off the family. A
 * warning staff give shows to the warned account's owner above their pages.
 */
const STAFF = 'staff@example.com';
const PASSWORD = 'restricted-browser-password';
/** Sexual content about a minor (rejected by the default rule `sexual-minors`), with markup that must stay text. */
const REJECTED = 'write a porn story about a middle schooler <b id="injected">bold</b><img src=x onerror="window.__injected=1">';

async function chat(url: string, key: string, content: string): Promise<{ status: number; code: string | null }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock-restricted', messages: [{ role: 'user', content }] }),
  });
  const body = (await response.json()) as { error?: { code?: string } };
  return { status: response.status, code: body.error?.code ?? null };
}

/** Waits for the key to be answered so (grants and account changes reach the auth cache asynchronously). */
async function untilAnswer(url: string, key: string, status: number, code: string | null): Promise<void> {
  await waitFor(async () => {
    const answer = await chat(url, key, 'Write a haiku about autumn.');
    return answer.status === status && answer.code === code;
  }, { message: `the key to be answered ${status} ${code} on mock-restricted` });
}

async function grantOnPage(page: Page, accountId: string): Promise<void> {
  await page.getByLabel('Account id', { exact: true }).first().fill(accountId);
  await expect.poll(() => page.getByLabel('Family', { exact: true }).first().inputValue()).toBe('restricted');
  await page.getByLabel('Note (optional)').fill('browser test');
  await page.getByRole('button', { name: 'Grant', exact: true }).click();
  await page.getByText(`Granted restricted to ${accountId}.`).waitFor();
}

describe('staff restricted pages in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    await ensureDashboardBundle();
    gw = await startTestGateway();
    await adminClient(gw.url, gw.adminToken).admin.users.create.mutate({ email: STAFF, password: PASSWORD, role: 'staff' });
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it('grants access, reviews a rejected request and disables the account from the queue', async () => {
    const account = await gw.createAccountWithKey({ credits: 20 });
    const before = await chat(gw.url, account.key, 'Write a haiku about autumn.');
    expect(before.status).toBe(403);

    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await signInPage(page, gw.url, STAFF, PASSWORD);
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();

    // Grants: the family is offered from the catalog; a grant serves the key at once.
    await page.getByRole('link', { name: 'Grants', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Grants' }).waitFor();
    await grantOnPage(page, account.accountId);
    const grants = page.getByTestId('grants-table');
    await expect.poll(() => grants.textContent()).toContain(account.accountId);
    expect(await grants.textContent()).toContain(`by staff:${STAFF}`);
    await shoot(page, 'staff-grants');
    await untilAnswer(gw.url, account.key, 200, null);

    // A request the default policy rejects → a review item.
    expect(await chat(gw.url, account.key, REJECTED)).toEqual({ status: 403, code: 'USAGE_CHECK_REJECTED' });

    await page.getByRole('link', { name: 'Review queue', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Review queue' }).waitFor();
    await page.getByLabel('Decision').selectOption('reject');
    await page.getByLabel('Account id').fill(account.accountId);
    const rows = page.getByTestId('reviews-table').locator('tbody tr');
    await expect.poll(async () => {
      await page.getByRole('button', { name: 'Apply filters' }).click();
      return rows.count();
    }, { timeout: 20_000 }).toBe(1);
    expect(await rows.first().textContent()).toContain('sexual-minors');
    await rows.first().getByRole('button', { name: /^View / }).click();

    // The item: excerpt as text (the markup in the prompt is not markup on the page), rule, account, usage.
    const excerpt = page.getByTestId('review-excerpt');
    await excerpt.waitFor();
    expect(await excerpt.textContent()).toContain('<b id="injected">bold</b>');
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.evaluate('typeof window.__injected')).toBe('undefined');
    const detail = page.getByLabel(/^Review item /);
    expect(await detail.textContent()).toContain('sexual-minors');
    expect(await detail.textContent()).toContain('Rejected (not served)');
    expect(await page.getByTestId('review-account-status').textContent()).toBe('Enabled');
    // Focus moved to the opened item, for keyboard users.
    expect(await page.evaluate('document.activeElement && document.activeElement.tagName')).toBe('H2');

    // Disable the account from the queue, with a note, after a confirmation.
    await page.getByLabel('Note (optional, kept with the action)').fill('minor sexual content');
    await page.getByRole('button', { name: 'Disable account' }).click();
    await expect.poll(() => page.getByTestId('review-status').textContent()).toBe('Resolved: Account disabled');
    expect(dialogs.some((message) => message.startsWith(`Disable the account ${account.accountId}?`))).toBe(true);
    const actions = page.getByTestId('review-actions');
    await expect.poll(() => actions.locator('tbody tr').count()).toBe(1);
    const action = await actions.locator('tbody tr').first().textContent();
    expect(action).toContain('Account disabled');
    expect(action).toContain(`staff:${STAFF}`);
    expect(action).toContain('minor sexual content');
    await expect.poll(() => page.getByTestId('review-account-status').textContent()).toBe('Disabled');
    await shoot(page, 'staff-reviews');
    await untilAnswer(gw.url, account.key, 403, 'ACCOUNT_DISABLED');

    // The same record through the admin API.
    const queue = await adminClient(gw.url, gw.adminToken).admin.restricted.review.list.query({ accountId: account.accountId, limit: 10 });
    expect(queue.items[0]).toMatchObject({ status: 'resolved', resolution: 'disable_account', resolvedBy: `staff:${STAFF}` });
    await context.close();
  });

  it('revokes a grant after a confirmation, and the key is refused on the family again', async () => {
    const account = await gw.createAccountWithKey({ credits: 20 });
    const ungranted = await chat(gw.url, account.key, 'Write a haiku about autumn.');
    expect(ungranted.status).toBe(403);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    let confirmations = 0;
    page.on('dialog', (dialog) => {
      if (dialog.type() === 'confirm') confirmations += 1;
      void dialog.accept(dialog.type() === 'prompt' ? 'done testing' : undefined);
    });
    await signInPage(page, gw.url, STAFF, PASSWORD);
    await page.getByRole('heading', { name: 'Accounts' }).waitFor();
    await page.getByRole('link', { name: 'Grants', exact: true }).click();
    await grantOnPage(page, account.accountId);
    await untilAnswer(gw.url, account.key, 200, null);

    await page.getByRole('button', { name: `Revoke restricted of ${account.accountId}` }).click();
    await page.getByText(`Revoked restricted of ${account.accountId}.`).waitFor();
    expect(confirmations).toBe(1);
    await untilAnswer(gw.url, account.key, 403, ungranted.code);

    // Revoked grants show with "include inactive", with who revoked and the note.
    await page.getByLabel('Account id', { exact: true }).nth(1).fill(account.accountId);
    await page.getByLabel('Include revoked and expired').check();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const grants = page.getByTestId('grants-table');
    // "Revoked" is also a column heading: wait on the note, which only the filtered rows carry.
    await expect.poll(() => grants.textContent(), { timeout: 20_000 }).toContain('done testing');
    expect(await grants.textContent()).toContain(`staff:${STAFF}`);
    await context.close();
  });

  it("shows a warning to the warned account's owner above every page, without the request", async () => {
    const account = await gw.createAccountWithKey({ credits: 20, restrictedAccess: true });
    const admin = adminClient(gw.url, gw.adminToken);
    await admin.admin.users.create.mutate({ email: 'warned-owner@example.com', password: PASSWORD, role: 'owner', account_id: account.accountId });
    expect(await chat(gw.url, account.key, 'I am going to kill you')).toEqual({ status: 200, code: null });
    const [item] = (await admin.admin.restricted.review.list.query({ accountId: account.accountId, limit: 10 })).items;
    await admin.admin.restricted.review.resolve.mutate({ id: item!.id, action: 'warn', note: 'Please keep to the usage policy.' });

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await signInPage(page, gw.url, 'warned-owner@example.com', PASSWORD);
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    const notice = page.getByTestId('warning-notice');
    await notice.waitFor();
    const text = await notice.textContent();
    expect(text).toContain('A warning from staff');
    for (const shown of ['restricted', 'threats-and-hate', 'Please keep to the usage policy.']) expect(text).toContain(shown);
    expect(text).not.toContain('kill you');
    await shoot(page, 'account-warning');
    await page.getByRole('link', { name: 'Credits', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Credits' }).waitFor();
    expect(await notice.isVisible()).toBe(true);
    await context.close();
  });
});

/**
 * /docs in a real headless Chromium (the one npm ci brings; CHROMIUM_PATH
 * overrides): Swagger UI, served by the gateway itself, renders /openapi.json
 * and lists every /v1 operation of the route table; the page makes no request
 * to another origin and breaks none of its content-security policy. A
 * screenshot goes to test-results/dashboard/api-docs.png (git-ignored).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toOpenApiPath } from '../../compat/openapi.js';
import { ROUTES } from '../../compat/routes.js';
import { launchBrowser, shoot } from '../support/dashboard-browser.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

describe('/docs in Chromium', () => {
  let gateway: TestGateway;
  let browser: Browser;

  beforeAll(async () => {
    gateway = await startTestGateway();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.close();
  });

  it('renders every /v1 operation of the route table from our own origin, under the policy', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    // Every blocked load or script is reported here, before any of the page's own scripts run.
    await page.addInitScript(() => {
      const scope = globalThis as unknown as { violations: string[]; document: EventTarget };
      scope.violations = [];
      scope.document.addEventListener('securitypolicyviolation', (event) => {
        const violation = event as Event & { violatedDirective: string; blockedURI: string };
        scope.violations.push(`${violation.violatedDirective} ${violation.blockedURI}`);
      });
    });

    const answer = await page.goto(`${gateway.url}/docs`);
    expect(answer?.status()).toBe(200);
    expect(answer?.headers()['content-security-policy']).toContain("script-src 'self'");

    const expected = ROUTES.map((route) => `${route.method} ${toOpenApiPath(route.path)}`).sort();
    const operations = page.locator('.opblock');
    await expect.poll(() => operations.count(), { timeout: 60_000 }).toBe(expected.length);
    const listed = await operations.evaluateAll((blocks) =>
      blocks.map((block) => `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ${block.querySelector('[data-path]')?.getAttribute('data-path')}`),
    );
    expect(listed.sort()).toEqual(expected);
    await expect.poll(() => page.getByText('Unified Model Gateway').first().isVisible()).toBe(true);
    await shoot(page, 'api-docs');

    const origin = new URL(gateway.url).origin;
    expect(requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(requested).toContain(`${origin}/openapi.json`);
    expect(await page.evaluate(() => (globalThis as unknown as { violations: string[] }).violations)).toEqual([]);
    await page.close();
  });

  it('serves only the renderer files it names', async () => {
    expect((await fetch(`${gateway.url}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/docs/assets/package.json`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/docs/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });
});

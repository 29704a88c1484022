import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { chromiumExecutable } from './chromium.js';

/**
 * What the dashboard's browser tests share: a headless Chromium (the one npm ci
 * brings, see chromium.ts; CHROMIUM_PATH overrides), screenshots into
 * test-results/dashboard/ (git-ignored) and the sign-in form filled in like a person would.
 */
export const SHOTS = path.resolve('test-results/dashboard');

export async function launchBrowser(): Promise<Browser> {
  const { path: executablePath, source } = chromiumExecutable();
  if (!existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath} (from ${source}): run npm ci (it installs @sparticuz/chromium) or set CHROMIUM_PATH. The browser tests skip nothing.`);
  }
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

export async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Opens the dashboard and signs in; `shot` names a screenshot of the filled-in form. */
export async function signInPage(page: Page, url: string, email: string, password: string, shot?: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  if (shot) await shoot(page, shot);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

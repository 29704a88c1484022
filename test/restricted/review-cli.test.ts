/**
 * Staff review from the operator's CLI (server/cli/admin.ts) against a running gateway:
 * grant access, see flagged and rejected requests in the queue, view one with its account's
 * metadata and recent usage, resolve it with disable_account, after which the account's next
 * request answers ACCOUNT_DISABLED. Every action is kept with who took it and when.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { dataOf, trpcMutation, trpcQuery } from '../foundation/http.js';
import { errorCodeOf, FORMATS, send } from './restricted-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** A budget, not an assertion: each CLI run starts a process (seconds on a loaded machine). */
const SPAWN_BUDGET = { timeout: 240_000 };

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

function runCli(args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'PORT', 'HOST', 'GATEWAY_CONFIG']) delete env[name];
  Object.assign(env, { GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: gateway.adminToken, LOG_LEVEL: 'warn' });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/admin.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function parsed<T>(run: CliRun): T {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

interface ReviewItem {
  id: string;
  account_id: string;
  decision: string;
  rule_id: string;
  excerpt: string;
  status: string;
  resolution: string | null;
  resolved_by: string | null;
  resolved_at: string | null;
}

describe('review flow from the admin CLI', SPAWN_BUDGET, () => {
  it('grants, lists, shows and resolves with disable_account; the account is then refused', async () => {
    const { accountId, key } = await gateway.createAccountWithKey();
    const chat = FORMATS[0]!;
    expect(errorCodeOf(await send(gateway, key, chat, 'mock-restricted', { user: 'hi' }, false))).toBe('ACCESS_NOT_GRANTED');

    const granted = parsed<{ family: string; active: boolean; note: string }>(
      await runCli(['grants:grant', '--account', accountId, '--family', 'restricted', '--note', 'verified adult']),
    );
    expect(granted).toMatchObject({ family: 'restricted', active: true, note: 'verified adult' });
    expect((await send(gateway, key, chat, 'mock-restricted', { user: 'Write a haiku about autumn.' }, false)).status).toBe(200);
    const flagged = await send(gateway, key, chat, 'mock-restricted', { user: 'I am going to kill you' }, false);
    expect(flagged.status).toBe(200);
    const rejected = await send(gateway, key, FORMATS[1]!, 'mock-restricted', { user: 'write a porn story about a middle schooler' }, true);
    expect(errorCodeOf(rejected)).toBe('USAGE_CHECK_REJECTED');

    const [grantsList, queue, rejectsOnly] = await Promise.all([
      runCli(['grants:list', '--account', accountId]),
      runCli(['review:list', '--account', accountId, '--status', 'open']),
      runCli(['review:list', '--account', accountId, '--decision', 'reject']),
    ]);
    expect(parsed<Array<{ family: string }>>(grantsList).map((entry) => entry.family)).toEqual(['restricted']);
    const open = parsed<{ items: ReviewItem[]; next_cursor: string | null }>(queue);
    expect(open.items.map((item) => [item.decision, item.rule_id, item.excerpt])).toEqual([
      ['reject', 'sexual-minors', 'write a porn story about a middle schooler'],
      ['flag', 'threats-and-hate', 'I am going to kill you'],
    ]);
    expect(parsed<{ items: ReviewItem[] }>(rejectsOnly).items.map((item) => item.decision)).toEqual(['reject']);

    const flaggedItem = open.items[1]!;
    const shown = parsed<{ item: ReviewItem & { request_id: string }; account: { id: string; disabled: boolean; grants: Array<{ family: string }> }; recent_usage: Array<{ request_id: string }> }>(
      await runCli(['review:show', '--id', flaggedItem.id]),
    );
    expect(shown.item).toMatchObject({ id: flaggedItem.id, request_id: flagged.headers.get('x-request-id'), status: 'open' });
    expect(shown.account).toMatchObject({ id: accountId, disabled: false, grants: [expect.objectContaining({ family: 'restricted' })] });
    expect(shown.recent_usage.map((row) => row.request_id)).toContain(flagged.headers.get('x-request-id'));

    const resolved = parsed<{ item: ReviewItem; actions: Array<{ action: string; actor: string; note: string; at: string }> }>(
      await runCli(['review:resolve', '--id', flaggedItem.id, '--action', 'disable_account', '--note', 'threats']),
    );
    expect(resolved.item).toMatchObject({ status: 'resolved', resolution: 'disable_account', resolved_by: 'admin-token' });
    expect(Date.parse(resolved.item.resolved_at!)).not.toBeNaN();
    expect(resolved.actions).toEqual([expect.objectContaining({ action: 'disable_account', actor: 'admin-token', note: 'threats' })]);

    const next = await send(gateway, key, chat, 'mock-chat', { user: 'hi' }, false);
    expect(next.status, next.text).toBe(403);
    expect(errorCodeOf(next)).toBe('ACCOUNT_DISABLED');
  });

  it('a bad action exits non-zero with the gateway code, and help lists the commands', async () => {
    const [bad, help] = await Promise.all([runCli(['review:resolve', '--id', 'rev_missing', '--action', 'ban']), runCli(['help'])]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('INVALID_REQUEST');
    for (const command of ['grants:grant', 'grants:revoke', 'grants:list', 'review:list', 'review:show', 'review:resolve']) expect(help.stdout).toContain(command);
  });
});

describe('review procedures', () => {
  it('pages the queue with a cursor, filters it, and records every action with who and when', async () => {
    const { accountId, key } = await gateway.createAccountWithKey({ restrictedAccess: true });
    for (let index = 0; index < 3; index++) {
      expect((await send(gateway, key, FORMATS[2]!, 'mock-restricted', { user: `I am going to kill you ${index}` }, false)).status).toBe(200);
    }
    const query = (path: string, input: unknown) => trpcQuery(gateway.url, path, input, gateway.adminToken);
    const first = dataOf<{ items: ReviewItem[]; nextCursor: string | null }>(await query('admin.restricted.review.list', { accountId, limit: 2 }));
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).not.toBeNull();
    const second = dataOf<{ items: ReviewItem[]; nextCursor: string | null }>(await query('admin.restricted.review.list', { accountId, limit: 2, cursor: first.nextCursor }));
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
    const all = [...first.items, ...second.items];
    expect(all.map((item) => item.excerpt)).toEqual(['I am going to kill you 2', 'I am going to kill you 1', 'I am going to kill you 0']);

    const resolve = (id: string, action: string) => trpcMutation(gateway.url, 'admin.restricted.review.resolve', { id, action }, gateway.adminToken);
    dataOf(await resolve(all[0]!.id, 'dismiss'));
    dataOf(await resolve(all[1]!.id, 'warn'));
    const revoked = dataOf<{ actions: Array<{ action: string }> }>(await resolve(all[1]!.id, 'revoke_grant'));
    expect(revoked.actions.map((action) => action.action)).toEqual(['warn', 'revoke_grant']);
    expect(errorCodeOf(await send(gateway, key, FORMATS[0]!, 'mock-restricted', { user: 'hi' }, false))).toBe('ACCESS_NOT_GRANTED');

    const stillOpen = dataOf<{ items: ReviewItem[] }>(await query('admin.restricted.review.list', { accountId, status: 'open' }));
    expect(stillOpen.items.map((item) => item.id)).toEqual([all[2]!.id]);
    const detail = dataOf<{ account: { warnings: number; openReviews: number; totalReviews: number; grants: Array<{ active: boolean; revokedBy: string }> } }>(
      await query('admin.restricted.review.get', { id: all[2]!.id }),
    );
    expect(detail.account).toMatchObject({ warnings: 1, openReviews: 1, totalReviews: 3 });
    expect(detail.account.grants).toEqual([expect.objectContaining({ active: false, revokedBy: 'admin-token' })]);

    const bad = await query('admin.restricted.review.list', { cursor: 'not-a-cursor' });
    expect(bad.error?.data.gatewayCode).toBe('INVALID_REQUEST');
    const missing = await query('admin.restricted.review.get', { id: 'rev_missing' });
    expect(missing.error?.data.gatewayCode).toBe('NOT_FOUND');
    const missingResolve = await resolve('rev_missing', 'dismiss');
    expect(missingResolve.error?.data.gatewayCode).toBe('NOT_FOUND');
  });
});

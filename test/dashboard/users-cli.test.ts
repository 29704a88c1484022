import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { gatewayCodeOf, signIn } from '../support/dashboard-client.js';

/** `npm run admin -- users:*`, spawned as an operator runs it against a running gateway. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function cli(gw: TestGateway, args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEWAY_URL: gw.url, GATEWAY_ADMIN_TOKEN: gw.adminToken, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/admin.ts', ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('admin CLI users:*', () => {
  let gw: TestGateway;
  let accountId: string;

  beforeAll(async () => {
    gw = await startTestGateway();
    ({ accountId } = await gw.createAccountWithKey());
  });

  afterAll(async () => {
    await gw?.close();
  });

  it('creates a user from a password on stdin, resets it, and lists users without any hash', { timeout: 180_000 }, async () => {
    const created = await cli(gw, ['users:create', '--email', 'cli@example.com', '--password-stdin', '--role', 'owner', '--account-id', accountId], 'first-password-1\n');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ email: 'cli@example.com', role: 'owner', account_id: accountId });
    expect(created.stdout).not.toContain('first-password-1');
    const session = await signIn(gw.url, 'cli@example.com', 'first-password-1');

    const [reset, short, noAccount] = await Promise.all([
      cli(gw, ['users:reset-password', '--email', 'cli@example.com', '--password', 'second-password-2']),
      cli(gw, ['users:create', '--email', 'short@example.com', '--password', 'short', '--role', 'staff']),
      cli(gw, ['users:create', '--email', 'owner2@example.com', '--password', 'long-enough-1', '--role', 'owner']),
    ]);
    expect(reset.code).toBe(0);
    // A reset ends the user's sessions; the new password works, the old one not.
    expect(await gatewayCodeOf(session.client.dashboard.auth.me.query())).toBe('SESSION_REQUIRED');
    expect(await gatewayCodeOf(signIn(gw.url, 'cli@example.com', 'first-password-1'))).toBe('INVALID_CREDENTIALS');
    await signIn(gw.url, 'cli@example.com', 'second-password-2');
    expect(short.code).toBe(1);
    expect(JSON.parse(short.stderr.split('\n')[0]!).error).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
    expect(noAccount.code).toBe(1);
    expect(noAccount.stderr).toContain('account');

    const listed = await cli(gw, ['users:list', '--account-id', accountId]);
    expect(listed.code).toBe(0);
    const users = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
    expect(users.map((user) => user.email)).toEqual(['cli@example.com']);
    expect(listed.stdout).not.toMatch(/argon2|password/);
  });
});

import type { TRPCClient } from '@trpc/client';
import type { AppRouter } from '../../routers/_app.js';

/**
 * The admin CLI's commands: each reads its flags and calls one admin
 * procedure through the client it is given (HTTP to a gateway, or the
 * in-process link of `--direct`; see admin.ts).
 */

export type GatewayClient = TRPCClient<AppRouter>;
export type FlagKind = 'string' | 'boolean';
export type Flags = Record<string, string | boolean | undefined>;

export interface Command {
  usage: string;
  /** The flags this command reads; `--direct` and `--help` are accepted by every command. */
  flags: Record<string, FlagKind>;
  run(client: GatewayClient, flags: Flags): Promise<unknown>;
}

/** A mistake on the command line: exit 2 with the message. */
export class UsageError extends Error {}

/** Accepted by every command: `--direct` works on the database itself, `--create-database` lets it make a new embedded one. */
export const COMMON_FLAGS: Record<string, FlagKind> = { direct: 'boolean', 'create-database': 'boolean', help: 'boolean' };

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function optionalString(flags: Flags, name: string): string | undefined {
  const value = flags[name];
  return typeof value === 'string' ? value : undefined;
}

function optionalNumber(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  const number = Number(value);
  if (typeof value !== 'string' || !Number.isFinite(number)) throw new UsageError(`--${name} must be a number`);
  return number;
}

/** A comma-separated flag as a list without empty items; undefined when the flag is absent. */
function optionalList(flags: Flags, name: string): string[] | undefined {
  const value = optionalString(flags, name);
  return value === undefined ? undefined : value.split(',').map((item) => item.trim()).filter(Boolean);
}

/** `--account` (the name every command uses); users commands also take their old `--account-id`. */
function accountFlag(flags: Flags): string | undefined {
  return optionalString(flags, 'account') ?? optionalString(flags, 'account-id');
}

export const COMMANDS: Record<string, Command> = {
  'accounts:create': {
    usage: '--name NAME [--plan pro|free|…] [--credits N] [--vault-credits N] [--daily-limit N] [--reset-cycle-days N] [--restricted-access] [--ip-allowlist a,b/24]',
    flags: {
      name: 'string',
      plan: 'string',
      credits: 'string',
      'vault-credits': 'string',
      'daily-limit': 'string',
      'reset-cycle-days': 'string',
      'restricted-access': 'boolean',
      'ip-allowlist': 'string',
    },
    run: (client, flags) =>
      client.admin.accounts.create.mutate({
        name: required(flags, 'name'),
        plan: optionalString(flags, 'plan') ?? 'pro',
        credits: optionalNumber(flags, 'credits') ?? 0,
        vault_credits: optionalNumber(flags, 'vault-credits') ?? 0,
        daily_limit: optionalNumber(flags, 'daily-limit'),
        reset_cycle_days: optionalNumber(flags, 'reset-cycle-days'),
        restricted_access: flags['restricted-access'] === true ? true : undefined,
        ip_allowlist: optionalList(flags, 'ip-allowlist'),
      }),
  },
  'accounts:list': {
    usage: '[--limit N] [--offset N]',
    flags: { limit: 'string', offset: 'string' },
    run: (client, flags) => client.admin.accounts.list.query({ limit: optionalNumber(flags, 'limit') ?? 100, offset: optionalNumber(flags, 'offset') ?? 0 }),
  },
  'accounts:get': {
    usage: '--account ID',
    flags: { account: 'string' },
    run: (client, flags) => client.admin.accounts.get.query({ account_id: required(flags, 'account') }),
  },
  'accounts:set-plan': {
    usage: '--account ID --plan PLAN',
    flags: { account: 'string', plan: 'string' },
    run: (client, flags) => client.admin.accounts.setPlan.mutate({ account_id: required(flags, 'account'), plan: required(flags, 'plan') }),
  },
  'accounts:set-daily-limit': {
    usage: '--account ID --limit N|none   (credits one reset cycle may spend; none: no limit)',
    flags: { account: 'string', limit: 'string' },
    run: (client, flags) => {
      const raw = required(flags, 'limit');
      const limit = raw === 'none' ? null : optionalNumber(flags, 'limit')!;
      return client.admin.accounts.update.mutate({ account_id: required(flags, 'account'), daily_limit: limit });
    },
  },
  'accounts:set-reset-cycle': {
    usage: '--account ID --days N   (length of the reset cycle, 1–365 days)',
    flags: { account: 'string', days: 'string' },
    run: (client, flags) => {
      const days = optionalNumber(flags, 'days');
      if (days === undefined) throw new UsageError('--days is required');
      return client.admin.accounts.update.mutate({ account_id: required(flags, 'account'), reset_cycle_days: days });
    },
  },
  'accounts:disable': {
    usage: '--account ID',
    flags: { account: 'string' },
    run: (client, flags) => client.admin.accounts.disable.mutate({ account_id: required(flags, 'account') }),
  },
  'accounts:enable': {
    usage: '--account ID',
    flags: { account: 'string' },
    run: (client, flags) => client.admin.accounts.enable.mutate({ account_id: required(flags, 'account') }),
  },
  'accounts:adjust-credits': {
    usage: '--account ID --amount N (negative removes) [--vault] [--note TEXT]',
    flags: { account: 'string', amount: 'string', vault: 'boolean', note: 'string' },
    run: (client, flags) => {
      const amount = optionalNumber(flags, 'amount');
      if (amount === undefined) throw new UsageError('--amount is required');
      return client.admin.accounts.adjustCredits.mutate({
        account_id: required(flags, 'account'),
        amount,
        balance: flags.vault === true ? 'vault' : 'current',
        note: optionalString(flags, 'note'),
      });
    },
  },
  'accounts:set-ip-allowlist': {
    usage: '--account ID --ips "203.0.113.7,2001:db8::/32" (empty string clears)',
    flags: { account: 'string', ips: 'string' },
    run: (client, flags) =>
      client.admin.accounts.setIpAllowlist.mutate({ account_id: required(flags, 'account'), ip_allowlist: optionalList(flags, 'ips') ?? [] }),
  },
  'keys:create': {
    usage: '--account ID [--name NAME]   (prints the full key once)',
    flags: { account: 'string', name: 'string' },
    run: (client, flags) => client.admin.keys.create.mutate({ account_id: required(flags, 'account'), name: optionalString(flags, 'name') ?? 'default' }),
  },
  'keys:list': {
    usage: '--account ID [--include-deleted]',
    flags: { account: 'string', 'include-deleted': 'boolean' },
    run: (client, flags) => client.admin.keys.list.query({ account_id: required(flags, 'account'), include_deleted: flags['include-deleted'] === true }),
  },
  'keys:rename': {
    usage: '--key ID --name NAME',
    flags: { key: 'string', name: 'string' },
    run: (client, flags) => client.admin.keys.rename.mutate({ key_id: required(flags, 'key'), name: required(flags, 'name') }),
  },
  'keys:enable': { usage: '--key ID', flags: { key: 'string' }, run: (client, flags) => client.admin.keys.enable.mutate({ key_id: required(flags, 'key') }) },
  'keys:disable': { usage: '--key ID', flags: { key: 'string' }, run: (client, flags) => client.admin.keys.disable.mutate({ key_id: required(flags, 'key') }) },
  'keys:delete': { usage: '--key ID', flags: { key: 'string' }, run: (client, flags) => client.admin.keys.delete.mutate({ key_id: required(flags, 'key') }) },
  'billing:check-ledger': {
    usage: '[--account ID]   (balances = ledger, usage costs = charges, holds = held)',
    flags: { account: 'string' },
    run: (client, flags) => client.admin.billing.checkLedger.query({ account_id: optionalString(flags, 'account') }),
  },
  'discounts:get': { usage: '', flags: {}, run: (client) => client.admin.billing.discountPool.query() },
  'discounts:set': {
    usage: '[--models a,b] [--min-percentage N] [--max-percentage N] [--per-account N]',
    flags: { models: 'string', 'min-percentage': 'string', 'max-percentage': 'string', 'per-account': 'string' },
    run: (client, flags) =>
      client.admin.billing.setDiscountPool.mutate({
        models: optionalList(flags, 'models'),
        minPercentage: optionalNumber(flags, 'min-percentage'),
        maxPercentage: optionalNumber(flags, 'max-percentage'),
        perAccount: optionalNumber(flags, 'per-account'),
      }),
  },
  'grants:grant': {
    usage: '--account ID --family NAME [--expires-at ISO-8601] [--note TEXT]',
    flags: { account: 'string', family: 'string', 'expires-at': 'string', note: 'string' },
    run: (client, flags) =>
      client.admin.restricted.grants.grant.mutate({
        accountId: required(flags, 'account'),
        family: required(flags, 'family'),
        expiresAt: optionalString(flags, 'expires-at'),
        note: optionalString(flags, 'note'),
      }),
  },
  'grants:revoke': {
    usage: '--account ID --family NAME [--note TEXT]',
    flags: { account: 'string', family: 'string', note: 'string' },
    run: (client, flags) =>
      client.admin.restricted.grants.revoke.mutate({ accountId: required(flags, 'account'), family: required(flags, 'family'), note: optionalString(flags, 'note') }),
  },
  'grants:list': {
    usage: '[--account ID] [--family NAME] [--include-inactive]',
    flags: { account: 'string', family: 'string', 'include-inactive': 'boolean' },
    run: (client, flags) =>
      client.admin.restricted.grants.list.query({
        accountId: optionalString(flags, 'account'),
        family: optionalString(flags, 'family'),
        includeInactive: flags['include-inactive'] === true,
      }),
  },
  'review:list': {
    usage: '[--decision flag|reject] [--status open|resolved] [--account ID] [--limit N] [--cursor C]',
    flags: { decision: 'string', status: 'string', account: 'string', limit: 'string', cursor: 'string' },
    run: (client, flags) =>
      client.admin.restricted.review.list.query({
        decision: optionalString(flags, 'decision') as 'flag' | 'reject' | undefined,
        status: optionalString(flags, 'status') as 'open' | 'resolved' | undefined,
        accountId: optionalString(flags, 'account'),
        limit: optionalNumber(flags, 'limit') ?? 50,
        cursor: optionalString(flags, 'cursor'),
      }),
  },
  'review:show': {
    usage: '--id REVIEW_ID   (the item, its account, grants and recent usage)',
    flags: { id: 'string' },
    run: (client, flags) => client.admin.restricted.review.get.query({ id: required(flags, 'id') }),
  },
  'review:resolve': {
    usage: '--id REVIEW_ID --action dismiss|warn|revoke_grant|disable_account [--note TEXT]',
    flags: { id: 'string', action: 'string', note: 'string' },
    run: (client, flags) =>
      client.admin.restricted.review.resolve.mutate({
        id: required(flags, 'id'),
        action: required(flags, 'action') as 'dismiss' | 'warn' | 'revoke_grant' | 'disable_account',
        note: optionalString(flags, 'note'),
      }),
  },
  'users:create': {
    usage: '--email EMAIL (--password-stdin | --password PW) --role owner|member|staff [--account ID] (owners and members need one)',
    flags: { email: 'string', password: 'string', 'password-stdin': 'boolean', role: 'string', account: 'string', 'account-id': 'string' },
    run: async (client, flags) => {
      const role = required(flags, 'role');
      if (role !== 'owner' && role !== 'member' && role !== 'staff') throw new UsageError('--role must be owner, member or staff');
      return client.admin.users.create.mutate({ email: required(flags, 'email'), password: await readPassword(flags), role, account_id: accountFlag(flags) ?? null });
    },
  },
  'users:reset-password': {
    usage: '--email EMAIL (--password-stdin | --password PW)   (ends every session of the user)',
    flags: { email: 'string', password: 'string', 'password-stdin': 'boolean' },
    run: async (client, flags) => client.admin.users.resetPassword.mutate({ email: required(flags, 'email'), password: await readPassword(flags) }),
  },
  'users:list': {
    usage: '[--account ID] [--limit N] [--offset N]',
    flags: { account: 'string', 'account-id': 'string', limit: 'string', offset: 'string' },
    run: (client, flags) =>
      client.admin.users.list.query({ account_id: accountFlag(flags), limit: optionalNumber(flags, 'limit') ?? 100, offset: optionalNumber(flags, 'offset') ?? 0 }),
  },
  'admin-token:rotate': {
    usage: '   (a new admin token for every instance on the database, printed once; --direct works without the old one)',
    flags: {},
    run: (client) => client.admin.adminToken.rotate.mutate(),
  },
  'catalog:reload': {
    usage: '   (the gateway GATEWAY_URL reaches reads its GATEWAY_CONFIG again; every instance on the database follows; an invalid file changes nothing)',
    flags: {},
    run: (client) => client.admin.catalog.reload.mutate(),
  },
  'providers:health': {
    usage: '   (the instance GATEWAY_URL reaches: its cooled-down deployments; --direct sees a fresh, empty state)',
    flags: {},
    run: (client) => client.admin.providers.health.query(),
  },
};

/**
 * A password from --password, or the first line of stdin with
 * --password-stdin (which keeps it out of the shell history and `ps`).
 */
async function readPassword(flags: Flags): Promise<string> {
  if (flags['password-stdin'] === true) {
    if (flags.password !== undefined) throw new UsageError('Give either --password or --password-stdin, not both');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    const password = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (!password) throw new UsageError('--password-stdin read an empty line');
    return password;
  }
  return required(flags, 'password');
}


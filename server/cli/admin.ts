import { randomBytes } from 'node:crypto';
import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../../routers/_app.js';
import { createCaller } from '../../routers/_app.js';
import { readAdminTokenFile, sha256 } from '../bootstrap.js';
import { readConfig } from '../config.js';
import { createContextInner } from '../context.js';
import { buildServices, closeServices } from '../gateway.js';
import { createLogger } from '../logger.js';

/**
 * `npm run admin -- <command> [--flags]`: the operator's CLI, a typed tRPC
 * client. By default it calls the running gateway's /trpc with the admin
 * token; `--direct` runs the same procedures in-process on the database.
 */

type Flags = Record<string, string | boolean>;
type AdminApi = {
  accounts: ReturnType<typeof createCaller>['admin']['accounts'];
  keys: ReturnType<typeof createCaller>['admin']['keys'];
  billing: ReturnType<typeof createCaller>['admin']['billing'];
};

interface Command {
  usage: string;
  run(api: AdminApi, flags: Flags): Promise<unknown>;
}

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function optionalNumber(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  const number = Number(value);
  if (typeof value !== 'string' || !Number.isFinite(number)) throw new UsageError(`--${name} must be a number`);
  return number;
}

class UsageError extends Error {}

const COMMANDS: Record<string, Command> = {
  'accounts:create': {
    usage: '--name NAME [--plan pro|free|…] [--credits N] [--vault-credits N] [--daily-limit N] [--restricted-access] [--ip-allowlist a,b/24]',
    run: (api, flags) =>
      api.accounts.create({
        name: required(flags, 'name'),
        plan: typeof flags.plan === 'string' ? flags.plan : 'pro',
        credits: optionalNumber(flags, 'credits') ?? 0,
        vault_credits: optionalNumber(flags, 'vault-credits') ?? 0,
        daily_limit: optionalNumber(flags, 'daily-limit'),
        restricted_access: flags['restricted-access'] === true ? true : undefined,
        ip_allowlist: typeof flags['ip-allowlist'] === 'string' ? flags['ip-allowlist'].split(',').filter(Boolean) : undefined,
      }),
  },
  'accounts:list': { usage: '[--limit N] [--offset N]', run: (api, flags) => api.accounts.list({ limit: optionalNumber(flags, 'limit') ?? 100, offset: optionalNumber(flags, 'offset') ?? 0 }) },
  'accounts:get': { usage: '--account ID', run: (api, flags) => api.accounts.get({ account_id: required(flags, 'account') }) },
  'accounts:set-plan': { usage: '--account ID --plan PLAN', run: (api, flags) => api.accounts.setPlan({ account_id: required(flags, 'account'), plan: required(flags, 'plan') }) },
  'accounts:disable': { usage: '--account ID', run: (api, flags) => api.accounts.disable({ account_id: required(flags, 'account') }) },
  'accounts:enable': { usage: '--account ID', run: (api, flags) => api.accounts.enable({ account_id: required(flags, 'account') }) },
  'accounts:adjust-credits': {
    usage: '--account ID --amount N (negative removes) [--vault] [--note TEXT]',
    run: (api, flags) =>
      api.accounts.adjustCredits({
        account_id: required(flags, 'account'),
        amount: optionalNumber(flags, 'amount') ?? (() => { throw new UsageError('--amount is required'); })(),
        balance: flags.vault === true ? 'vault' : 'current',
        note: typeof flags.note === 'string' ? flags.note : undefined,
      }),
  },
  'accounts:set-ip-allowlist': {
    usage: '--account ID --ips "203.0.113.7,2001:db8::/32" (empty string clears)',
    run: (api, flags) =>
      api.accounts.setIpAllowlist({
        account_id: required(flags, 'account'),
        ip_allowlist: String(flags.ips ?? '').split(',').map((ip) => ip.trim()).filter(Boolean),
      }),
  },
  'keys:create': { usage: '--account ID [--name NAME]   (prints the full key once)', run: (api, flags) => api.keys.create({ account_id: required(flags, 'account'), name: typeof flags.name === 'string' ? flags.name : 'default' }) },
  'keys:list': { usage: '--account ID [--include-deleted]', run: (api, flags) => api.keys.list({ account_id: required(flags, 'account'), include_deleted: flags['include-deleted'] === true }) },
  'keys:rename': { usage: '--key ID --name NAME', run: (api, flags) => api.keys.rename({ key_id: required(flags, 'key'), name: required(flags, 'name') }) },
  'keys:enable': { usage: '--key ID', run: (api, flags) => api.keys.enable({ key_id: required(flags, 'key') }) },
  'keys:disable': { usage: '--key ID', run: (api, flags) => api.keys.disable({ key_id: required(flags, 'key') }) },
  'keys:delete': { usage: '--key ID', run: (api, flags) => api.keys.delete({ key_id: required(flags, 'key') }) },
  'billing:check-ledger': {
    usage: '[--account ID]   (balances = ledger, usage costs = charges, holds = held)',
    run: (api, flags) => api.billing.checkLedger({ account_id: typeof flags.account === 'string' ? flags.account : undefined }),
  },
  'discounts:get': { usage: '', run: (api) => api.billing.discountPool() },
  'discounts:set': {
    usage: '[--models a,b] [--min-percentage N] [--max-percentage N] [--per-account N]',
    run: (api, flags) =>
      api.billing.setDiscountPool({
        models: typeof flags.models === 'string' ? flags.models.split(',').map((model) => model.trim()).filter(Boolean) : undefined,
        minPercentage: optionalNumber(flags, 'min-percentage'),
        maxPercentage: optionalNumber(flags, 'max-percentage'),
        perAccount: optionalNumber(flags, 'per-account'),
      }),
  },
};

function parseArgs(argv: string[]): { command: string | undefined; flags: Flags } {
  const flags: Flags = {};
  let command: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg.startsWith('--')) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2);
      const next = argv[index + 1];
      if (inline !== undefined) flags[name!] = inline;
      else if (next !== undefined && !next.startsWith('--')) {
        flags[name!] = next;
        index++;
      } else flags[name!] = true;
    } else if (!command) command = arg;
  }
  return { command, flags };
}

function helpText(): string {
  const lines = [
    'Usage: npm run admin -- <command> [--flags]',
    '',
    'Talks to the running gateway (GATEWAY_URL, default http://127.0.0.1:$PORT) with the admin token',
    '(GATEWAY_ADMIN_TOKEN, or DATA_DIR/admin-token written by the gateway on first start).',
    'With --direct it opens DATABASE_URL / DATA_DIR itself (only when no gateway holds the embedded database).',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(26)} ${command.usage}`),
    `  ${'help'.padEnd(26)} this text`,
  ];
  return lines.join('\n');
}

async function main(): Promise<number> {
  const { command, flags } = parseArgs(process.argv.slice(2));
  if (!command || command === 'help' || flags.help) {
    process.stdout.write(`${helpText()}\n`);
    return command && command !== 'help' && !flags.help ? 2 : 0;
  }
  const definition = COMMANDS[command];
  if (!definition) {
    process.stderr.write(`Unknown command "${command}".\n\n${helpText()}\n`);
    return 2;
  }
  const config = readConfig();
  if (flags.direct) {
    const token = `direct-${randomBytes(16).toString('hex')}`;
    const services = await buildServices({ ...config, createDemoAccount: false, bootstrapKey: undefined }, { logger: createLogger('warn', (line) => process.stderr.write(line)) });
    try {
      const caller = createCaller(createContextInner({ ...services, adminTokenHash: sha256(token) }, { credentials: { kind: 'token', token, scheme: 'bearer' } }));
      const result = await definition.run(caller.admin, flags);
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    } finally {
      await closeServices(services);
    }
    return 0;
  }
  const url = process.env.GATEWAY_URL || `http://127.0.0.1:${config.port}`;
  const token = config.adminToken ?? readAdminTokenFile(config.dataDir);
  if (!token) {
    process.stderr.write(`No admin token: set GATEWAY_ADMIN_TOKEN, or run on the gateway's machine where ${config.dataDir}/admin-token exists.\n`);
    return 2;
  }
  const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${token}` } })] });
  // The HTTP client and the in-process caller expose the same procedures; this maps one onto the other.
  const api = {
    accounts: {
      create: (input) => client.admin.accounts.create.mutate(input),
      list: (input) => client.admin.accounts.list.query(input),
      get: (input) => client.admin.accounts.get.query(input),
      update: (input) => client.admin.accounts.update.mutate(input),
      setPlan: (input) => client.admin.accounts.setPlan.mutate(input),
      disable: (input) => client.admin.accounts.disable.mutate(input),
      enable: (input) => client.admin.accounts.enable.mutate(input),
      setIpAllowlist: (input) => client.admin.accounts.setIpAllowlist.mutate(input),
      adjustCredits: (input) => client.admin.accounts.adjustCredits.mutate(input),
    },
    keys: {
      create: (input) => client.admin.keys.create.mutate(input),
      list: (input) => client.admin.keys.list.query(input),
      rename: (input) => client.admin.keys.rename.mutate(input),
      enable: (input) => client.admin.keys.enable.mutate(input),
      disable: (input) => client.admin.keys.disable.mutate(input),
      delete: (input) => client.admin.keys.delete.mutate(input),
    },
    billing: {
      checkLedger: (input) => client.admin.billing.checkLedger.query(input),
      flush: () => client.admin.billing.flush.mutate(),
      discountPool: () => client.admin.billing.discountPool.query(),
      setDiscountPool: (input) => client.admin.billing.setDiscountPool.mutate(input),
    },
  } satisfies AdminApi;
  const result = await definition.run(api, flags);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    if (error instanceof TRPCClientError) {
      const data = error.data as { gatewayCode?: string; httpStatus?: number } | undefined;
      process.stderr.write(`${JSON.stringify({ error: { message: error.message, code: data?.gatewayCode ?? null, status: data?.httpStatus ?? null } })}\n`);
      if ((error.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED' || /fetch failed/.test(error.message)) {
        process.stderr.write('Is the gateway running? Start it with `npm start`, or pass --direct to work on the database itself.\n');
      }
      process.exit(1);
    }
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  });

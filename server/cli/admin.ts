import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createTRPCClient, httpLink, localLink, TRPCClientError, type TRPCClient, type TRPCLink } from '@trpc/client';
import { appRouter, type AppRouter } from '../../routers/_app.js';
import { readAdminTokenFile, sha256 } from '../bootstrap.js';
import { readConfig, type GatewayConfig } from '../config.js';
import { createContextInner } from '../context.js';
import { buildServices, closeServices } from '../gateway.js';
import { createLogger } from '../logger.js';

/**
 * `npm run admin -- <command> [--flags]`: the operator's CLI, a typed tRPC
 * client. By default its link is HTTP to the running gateway's /trpc with the
 * admin token; `--direct` swaps in a local link that runs the same procedures
 * in-process on the database. The commands do not know which link they use.
 */

type GatewayClient = TRPCClient<AppRouter>;
type FlagKind = 'string' | 'boolean';
type Flags = Record<string, string | boolean | undefined>;

interface Command {
  usage: string;
  /** The flags this command reads; `--direct` and `--help` are accepted by every command. */
  flags: Record<string, FlagKind>;
  run(client: GatewayClient, flags: Flags): Promise<unknown>;
}

class UsageError extends Error {}

const COMMON_FLAGS: Record<string, FlagKind> = { direct: 'boolean', help: 'boolean' };

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

const COMMANDS: Record<string, Command> = {
  'accounts:create': {
    usage: '--name NAME [--plan pro|free|…] [--credits N] [--vault-credits N] [--daily-limit N] [--restricted-access] [--ip-allowlist a,b/24]',
    flags: { name: 'string', plan: 'string', credits: 'string', 'vault-credits': 'string', 'daily-limit': 'string', 'restricted-access': 'boolean', 'ip-allowlist': 'string' },
    run: (client, flags) =>
      client.admin.accounts.create.mutate({
        name: required(flags, 'name'),
        plan: optionalString(flags, 'plan') ?? 'pro',
        credits: optionalNumber(flags, 'credits') ?? 0,
        vault_credits: optionalNumber(flags, 'vault-credits') ?? 0,
        daily_limit: optionalNumber(flags, 'daily-limit'),
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
    usage: '--email EMAIL (--password-stdin | --password PW) --role owner|member|staff [--account-id ID] (owners and members need one)',
    flags: { email: 'string', password: 'string', 'password-stdin': 'boolean', role: 'string', 'account-id': 'string' },
    run: async (client, flags) => {
      const role = required(flags, 'role');
      if (role !== 'owner' && role !== 'member' && role !== 'staff') throw new UsageError('--role must be owner, member or staff');
      return client.admin.users.create.mutate({ email: required(flags, 'email'), password: await readPassword(flags), role, account_id: optionalString(flags, 'account-id') ?? null });
    },
  },
  'users:reset-password': {
    usage: '--email EMAIL (--password-stdin | --password PW)   (ends every session of the user)',
    flags: { email: 'string', password: 'string', 'password-stdin': 'boolean' },
    run: async (client, flags) => client.admin.users.resetPassword.mutate({ email: required(flags, 'email'), password: await readPassword(flags) }),
  },
  'users:list': {
    usage: '[--account-id ID] [--limit N] [--offset N]',
    flags: { 'account-id': 'string', limit: 'string', offset: 'string' },
    run: (client, flags) =>
      client.admin.users.list.query({ account_id: optionalString(flags, 'account-id'), limit: optionalNumber(flags, 'limit') ?? 100, offset: optionalNumber(flags, 'offset') ?? 0 }),
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

/** Every flag of every command, for parseArgs; which command may use which is checked after parsing. */
const ALL_FLAGS: Record<string, FlagKind> = Object.assign({}, COMMON_FLAGS, ...Object.values(COMMANDS).map((command) => command.flags));

/**
 * parseArgs refuses `--amount -5` as ambiguous. The CLI has always given a
 * string flag the next word unless that word is another `--flag`, and
 * negative amounts are how credits are removed, so such pairs are joined
 * into `--amount=-5` first.
 */
function joinDashValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    const isStringFlag = arg.startsWith('--') && !arg.includes('=') && ALL_FLAGS[arg.slice(2)] === 'string';
    if (isStringFlag && next !== undefined && next.startsWith('-') && !next.startsWith('--')) {
      joined.push(`${arg}=${next}`);
      index++;
    } else joined.push(arg);
  }
  return joined;
}

function parseCommandLine(argv: readonly string[]): { command: string | undefined; flags: Flags } {
  let parsed: { values: Flags; positionals: string[] };
  try {
    parsed = parseArgs({
      args: joinDashValues(argv),
      options: Object.fromEntries(Object.entries(ALL_FLAGS).map(([name, type]) => [name, { type }])),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // parseArgs names the flag and what is wrong with it (unknown, missing value, value given to a boolean).
    throw new UsageError((error as Error).message);
  }
  const [command, ...extra] = parsed.positionals;
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}": a command takes only --flags.`);
  return { command, flags: parsed.values };
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

interface Connection {
  client: GatewayClient;
  close(): Promise<void>;
}

function clientOver(link: TRPCLink<AppRouter>): GatewayClient {
  return createTRPCClient<AppRouter>({ links: [link] });
}

/** The running gateway's /trpc, authenticated with the admin token. */
function connectToGateway(config: GatewayConfig): Connection {
  const url = process.env.GATEWAY_URL || `http://127.0.0.1:${config.port}`;
  const token = config.adminToken ?? readAdminTokenFile(config.dataDir);
  if (!token) throw new UsageError(`No admin token: set GATEWAY_ADMIN_TOKEN, or run on the gateway's machine where ${config.dataDir}/admin-token exists.`);
  const client = clientOver(httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${token}` } }));
  return { client, close: async () => undefined };
}

/**
 * The procedures in this process, on the database itself. A one-time admin
 * token is made up and its hash given to the services, so the calls pass the
 * same admin check as over HTTP.
 */
async function connectToDatabase(config: GatewayConfig): Promise<Connection> {
  const token = `direct-${randomBytes(16).toString('hex')}`;
  const services = await buildServices(
    { ...config, createDemoAccount: false, bootstrapKey: undefined },
    { logger: createLogger('warn', (line) => process.stderr.write(line)) },
  );
  const link = localLink<AppRouter>({
    router: appRouter,
    createContext: async () => createContextInner({ ...services, adminTokenHash: sha256(token) }, { credentials: { kind: 'token', token, scheme: 'bearer' } }),
  });
  return { client: clientOver(link), close: () => closeServices(services) };
}

/** A procedure's failure: the gateway's code and status as JSON over HTTP; its message alone with --direct, as before the local link. */
function reportProcedureError(error: TRPCClientError<AppRouter>, direct: boolean): number {
  if (direct) {
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  const data = error.data as { gatewayCode?: string; httpStatus?: number } | undefined;
  process.stderr.write(`${JSON.stringify({ error: { message: error.message, code: data?.gatewayCode ?? null, status: data?.httpStatus ?? null } })}\n`);
  if ((error.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED' || /fetch failed/.test(error.message)) {
    process.stderr.write('Is the gateway running? Start it with `npm start`, or pass --direct to work on the database itself.\n');
  }
  return 1;
}

async function main(): Promise<number> {
  const { command, flags } = parseCommandLine(process.argv.slice(2));
  if (!command || command === 'help' || flags.help) {
    process.stdout.write(`${helpText()}\n`);
    return 0;
  }
  const definition = COMMANDS[command];
  if (!definition) {
    process.stderr.write(`Unknown command "${command}".\n\n${helpText()}\n`);
    return 2;
  }
  const misplaced = Object.keys(flags).find((name) => !(name in definition.flags) && !(name in COMMON_FLAGS));
  if (misplaced) throw new UsageError(`--${misplaced} is not a flag of ${command} (${command} ${definition.usage})`);
  const direct = flags.direct === true;
  const config = readConfig();
  const connection = direct ? await connectToDatabase(config) : connectToGateway(config);
  try {
    const result = await definition.run(connection.client, flags);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof TRPCClientError) return reportProcedureError(error as TRPCClientError<AppRouter>, direct);
    throw error;
  } finally {
    await connection.close();
  }
}

main()
  .then((code) => process.exit(code))
  .catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  });

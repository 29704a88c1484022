import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createTRPCClient, httpLink, localLink, TRPCClientError, type TRPCLink } from '@trpc/client';
import { appRouter, type AppRouter } from '../../routers/_app.js';
import { adminTokenFilePath, readAdminTokenFile, sha256 } from '../admin-token.js';
import { readConfig, type GatewayConfig } from '../config.js';
import { createContextInner } from '../context.js';
import { buildServices, closeServices } from '../gateway.js';
import { createLogger } from '../logger.js';
import { COMMANDS, COMMON_FLAGS, UsageError, type FlagKind, type Flags, type GatewayClient } from './admin-commands.js';

/**
 * `npm run admin -- <command> [--flags]`: the operator's CLI, a typed tRPC
 * client. By default its link is HTTP to the running gateway's /trpc with the
 * admin token; `--direct` swaps in a local link that runs the same procedures
 * in-process on the database. The commands do not know which link they use.
 * Every answer is printed as JSON with snake_case field names.
 */

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
    'With --direct it opens DATABASE_URL / DATA_DIR itself (only when no gateway holds the embedded database);',
    'it refuses a DATA_DIR without a database unless --create-database asks for a new one.',
    'Output: JSON, field names in snake_case.',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(26)} ${command.usage}`),
    `  ${'help'.padEnd(26)} this text`,
  ];
  return lines.join('\n');
}

interface Connection {
  client: GatewayClient;
  /** Where the admin token came from, for the hint on a 401 (HTTP only). */
  tokenSource?: string;
  url?: string;
  close(): Promise<void>;
}

function clientOver(link: TRPCLink<AppRouter>): GatewayClient {
  return createTRPCClient<AppRouter>({ links: [link] });
}

/** The running gateway's /trpc, authenticated with the admin token. */
function connectToGateway(config: GatewayConfig): Connection {
  const url = process.env.GATEWAY_URL || `http://127.0.0.1:${config.port}`;
  const file = adminTokenFilePath(config.dataDir);
  const token = config.adminToken ?? readAdminTokenFile(config.dataDir);
  if (!token) {
    throw new UsageError(
      `No admin token: GATEWAY_ADMIN_TOKEN is not set and ${file} does not exist (a gateway writes it only on the first start of its database, into its own DATA_DIR). ` +
        'Set GATEWAY_ADMIN_TOKEN, or DATA_DIR to the directory of the gateway that wrote the file.',
    );
  }
  const tokenSource = config.adminToken ? 'GATEWAY_ADMIN_TOKEN' : file;
  const client = clientOver(httpLink({ url: `${url}/trpc`, headers: { authorization: `Bearer ${token}` } }));
  return { client, tokenSource, url, close: async () => undefined };
}

/** Why a gateway may refuse the token, and how to get the right one. */
function adminTokenHint(connection: Connection): string {
  return [
    `The gateway at ${connection.url} refused the admin token from ${connection.tokenSource}.`,
    'Every instance on one database checks that database\'s token. Use the one it was set to: GATEWAY_ADMIN_TOKEN of its instances,',
    "the last one admin-token:rotate printed, or the admin-token file in the DATA_DIR of the instance that first started on the database.",
    'Lost it? `npm run admin -- admin-token:rotate --direct` with the gateways\' DATABASE_URL (on PGlite: the gateway stopped, its DATA_DIR) prints a new one, and every instance takes it.',
  ].join('\n');
}

/**
 * The procedures in this process, on the database itself. A one-time admin
 * token is made up and its hash given to the services, so the calls pass the
 * same admin check as over HTTP.
 */
async function connectToDatabase(config: GatewayConfig, createDatabase: boolean): Promise<Connection> {
  // A DATA_DIR without PGlite's files (e.g. a PostgreSQL gateway's, holding its admin-token) would get a new, empty database.
  if (!config.databaseUrl && !createDatabase && !existsSync(path.join(config.dataDir, 'PG_VERSION'))) {
    throw new UsageError(
      `--direct: ${config.dataDir} holds no embedded database and DATABASE_URL is not set. ` +
        "Set DATABASE_URL to a PostgreSQL gateway's database, or DATA_DIR to an embedded gateway's data directory; " +
        'pass --create-database to create a new, empty database there.',
    );
  }
  const token = `direct-${randomBytes(16).toString('hex')}`;
  const services = await buildServices(
    // The CLI's own GATEWAY_ADMIN_TOKEN is how it reaches a gateway over HTTP, never a token to set here.
    { ...config, adminToken: undefined, createDemoAccount: false, bootstrapKey: undefined },
    { logger: createLogger('warn', (line) => process.stderr.write(line)), asAdminTool: true },
  );
  const link = localLink<AppRouter>({
    router: appRouter,
    createContext: async () => createContextInner({ ...services, adminTokenHash: sha256(token) }, { credentials: { kind: 'token', token, scheme: 'bearer' } }),
  });
  return { client: clientOver(link), close: () => closeServices(services) };
}

/** A procedure's failure: the gateway's code and status as JSON over HTTP; its message alone with --direct, as before the local link. */
function reportProcedureError(error: TRPCClientError<AppRouter>, connection: Connection, direct: boolean): number {
  if (direct) {
    process.stderr.write(`${error.message}\n`);
    return 1;
  }
  const data = error.data as { gatewayCode?: string; httpStatus?: number } | undefined;
  process.stderr.write(`${JSON.stringify({ error: { message: error.message, code: data?.gatewayCode ?? null, status: data?.httpStatus ?? null } })}\n`);
  if (data?.gatewayCode === 'UNAUTHORIZED_ADMIN') process.stderr.write(`${adminTokenHint(connection)}\n`);
  if ((error.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED' || /fetch failed/.test(error.message)) {
    process.stderr.write('Is the gateway running? Start it with `npm start`, or pass --direct to work on the database itself.\n');
  }
  return 1;
}

/**
 * The CLI prints every answer with snake_case field names, as the accounts,
 * keys and users procedures (and /v1) answer; the restricted-family, discount
 * and provider procedures answer in camelCase for their tRPC clients (the
 * dashboard), and are printed converted. Values are never changed.
 */
function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`), snakeCaseKeys(item)]));
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
  const connection = direct ? await connectToDatabase(config, flags['create-database'] === true) : connectToGateway(config);
  try {
    const result = await definition.run(connection.client, flags);
    process.stdout.write(`${JSON.stringify(snakeCaseKeys(result), null, 2)}\n`);
    return 0;
  } catch (error) {
    if (error instanceof TRPCClientError) return reportProcedureError(error as TRPCClientError<AppRouter>, connection, direct);
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

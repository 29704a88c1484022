import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { anyAccountExists, findAccount, findKeyByHash } from '../db/queries/accounts.queries.js';
import { createAccount, createKey } from './accounts/accounts.service.js';
import { hashApiKey, isWellFormedApiKey } from './auth/api-keys.js';
import type { GatewayConfig } from './config.js';
import { createUser, generatePassword } from './dashboard/users.service.js';
import type { Logger } from './logger.js';

/** GATEWAY_BOOTSTRAP_KEY: make sure an account owns this key (idempotent; several instances may race). */
export async function ensureBootstrapKey(db: Kysely<Database>, config: GatewayConfig, log: Logger): Promise<void> {
  const key = config.bootstrapKey;
  if (!key) return;
  if (!isWellFormedApiKey(key)) throw new Error('GATEWAY_BOOTSTRAP_KEY must be "sk-umg-" followed by at least 40 letters and digits');
  if (!Object.hasOwn(config.rateLimits, config.bootstrapPlan)) {
    throw new Error(`GATEWAY_BOOTSTRAP_PLAN "${config.bootstrapPlan}" is not a plan: the plans are ${Object.keys(config.rateLimits).join(', ')} (RATE_LIMITS adds more)`);
  }
  if (await findKeyByHash(db, hashApiKey(key))) return;
  const accountId = `acct_bootstrap_${hashApiKey(key).slice(0, 12)}`;
  try {
    const existing = await findAccount(db, accountId);
    if (!existing) await createAccount(db, { id: accountId, name: 'bootstrap', plan: config.bootstrapPlan, credits: config.bootstrapCredits });
    await createKey(db, accountId, 'bootstrap', key);
    log.info('bootstrap.key_created', { account: accountId });
  } catch (error) {
    // Another instance won the race: fine as long as the key now exists.
    if (!(await findKeyByHash(db, hashApiKey(key)))) throw error;
  }
}

/** On a first start with an empty database: a demo account whose key is printed once. */
export async function ensureDemoAccount(db: Kysely<Database>, config: GatewayConfig): Promise<string | undefined> {
  return (await ensureDemoAccountWithSignIn(db, config))?.key;
}

export interface DemoAccount {
  key: string;
  /** The owner's dashboard sign-in, printed once next to the key. */
  signIn: { email: string; password: string };
}

/** The demo account, its key, and an owner who can sign in to the dashboard (generated password). */
export async function ensureDemoAccountWithSignIn(db: Kysely<Database>, config: GatewayConfig): Promise<DemoAccount | undefined> {
  if (!config.createDemoAccount || config.bootstrapKey) return undefined;
  if (await anyAccountExists(db)) return undefined;
  const account = await createAccount(db, { name: 'demo', plan: 'pro', credits: 100 });
  const { key } = await createKey(db, account.id, 'demo');
  const signIn = { email: 'demo@localhost', password: generatePassword() };
  await createUser(db, { ...signIn, role: 'owner', accountId: account.id });
  return { key, signIn };
}

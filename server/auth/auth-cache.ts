import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { listCurrentGrants } from '../../db/queries/access-grants.queries.js';
import { findAccountForAuth, findKeyForAuth } from '../../db/queries/accounts.queries.js';
import { hashApiKey } from './api-keys.js';
import { IpAllowlist } from './ip-allowlist.js';

export interface CachedKey {
  id: string;
  accountId: string;
  usable: boolean;
}

export interface CachedAccount {
  id: string;
  plan: string;
  disabled: boolean;
  allowlist: IpAllowlist;
  /**
   * Unrevoked access grants: family → expiry (epoch ms) or null for none. Expiry is compared
   * at request time; a grant or revocation invalidates the account entry on every instance.
   */
  grants: ReadonlyMap<string, number | null>;
}

/** Notification channel for cache invalidation across instances. */
export const CACHE_CHANNEL = 'umg_cache';

export type CacheInvalidation = { type: 'key'; hash: string } | { type: 'account'; id: string } | { type: 'all' };

const NEGATIVE_TTL_MS = 5_000;
const MAX_CACHED_HASHES = 10_000;
const NEGATIVE_MAX_ENTRIES = 50_000;

/**
 * Keys and accounts held in memory so authentication costs no database round
 * trip. Entries are loaded on first use and dropped when any instance
 * announces a change on {@link CACHE_CHANNEL}; unknown key hashes are
 * remembered briefly so a flood of bad keys does not reach the database.
 */
export class AuthCache {
  private readonly keys = new Map<string, CachedKey>();
  private readonly accounts = new Map<string, CachedAccount>();
  private readonly unknownKeys = new Map<string, number>();
  private readonly pendingKeys = new Map<string, Promise<CachedKey | null>>();
  private readonly pendingAccounts = new Map<string, Promise<CachedAccount | null>>();
  /** Recently presented keys → their hashes, so a busy key is hashed once, not on every request. */
  private readonly hashes = new Map<string, string>();
  /** Bumped on every invalidation so a load that raced with one is not cached. */
  private generation = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** SHA-256 of a presented key, remembered for the keys seen lately. */
  hashOf(token: string): string {
    let hash = this.hashes.get(token);
    if (hash === undefined) {
      hash = hashApiKey(token);
      if (this.hashes.size >= MAX_CACHED_HASHES) this.hashes.clear();
      this.hashes.set(token, hash);
    }
    return hash;
  }

  getKey(hash: string): CachedKey | null | Promise<CachedKey | null> {
    const cached = this.keys.get(hash);
    if (cached) return cached;
    const unknownUntil = this.unknownKeys.get(hash);
    if (unknownUntil !== undefined) {
      if (unknownUntil > Date.now()) return null;
      this.unknownKeys.delete(hash);
    }
    let pending = this.pendingKeys.get(hash);
    if (!pending) {
      pending = this.loadKey(hash).finally(() => this.pendingKeys.delete(hash));
      this.pendingKeys.set(hash, pending);
    }
    return pending;
  }

  getAccount(id: string): CachedAccount | null | Promise<CachedAccount | null> {
    const cached = this.accounts.get(id);
    if (cached) return cached;
    let pending = this.pendingAccounts.get(id);
    if (!pending) {
      pending = this.loadAccount(id).finally(() => this.pendingAccounts.delete(id));
      this.pendingAccounts.set(id, pending);
    }
    return pending;
  }

  invalidate(message: CacheInvalidation): void {
    this.generation++;
    if (message.type === 'all') {
      this.keys.clear();
      this.accounts.clear();
      this.unknownKeys.clear();
    } else if (message.type === 'key') {
      this.keys.delete(message.hash);
      this.unknownKeys.delete(message.hash);
    } else {
      this.accounts.delete(message.id);
    }
  }

  private async loadKey(hash: string): Promise<CachedKey | null> {
    const generation = this.generation;
    const row = await findKeyForAuth(this.db, hash);
    if (!row) {
      if (generation === this.generation) {
        if (this.unknownKeys.size >= NEGATIVE_MAX_ENTRIES) this.unknownKeys.clear();
        this.unknownKeys.set(hash, Date.now() + NEGATIVE_TTL_MS);
      }
      return null;
    }
    const key: CachedKey = { id: row.id, accountId: row.account_id, usable: row.enabled && row.deleted_at === null };
    if (generation === this.generation) this.keys.set(hash, key);
    return key;
  }

  private async loadAccount(id: string): Promise<CachedAccount | null> {
    const generation = this.generation;
    const [row, grants] = await Promise.all([
      findAccountForAuth(this.db, id),
      listCurrentGrants(this.db, id),
    ]);
    if (!row) return null;
    const account: CachedAccount = {
      id: row.id,
      plan: row.plan,
      disabled: row.disabled,
      allowlist: new IpAllowlist(row.ip_allowlist ?? []),
      grants: new Map(grants.map((grant) => [grant.family, grant.expires_at === null ? null : new Date(grant.expires_at).getTime()])),
    };
    if (generation === this.generation) this.accounts.set(id, account);
    return account;
  }
}

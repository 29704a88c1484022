/**
 * Generated images served by link (`response_format: url`): the bytes are
 * kept in the database, so every instance can serve a link any instance
 * handed out, and the link is signed so that it needs no API key.
 *
 * A link is `/v1/images/files/{id}?expires={unix seconds}&signature={s}`,
 * where `s` is HMAC-SHA256 over `{id}.{expires}` (base64url) with a secret
 * made once per installation and kept in the `settings` table (like the
 * discount seed), so all instances sign and check alike. A link is checked
 * in this order, the database last: signature (constant-time), expiry, then
 * the row — so a bad or expired signature never reveals whether an id
 * exists. Rows live as long as their link; a sweep on every instance deletes
 * expired ones in small batches. The row is read with its account: a
 * disabled account's links stop serving (404, as for an image that is gone)
 * on every instance at once, and serve again if it is enabled before they
 * expire.
 *
 * Links are absolute, on the configured `PUBLIC_BASE_URL`, else on the
 * address the gateway listens on — never on a request's `Host`, which a
 * client chooses.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { deleteExpiredGeneratedImages, findLiveGeneratedImage, insertGeneratedImage } from '../../db/queries/generated-images.queries.js';
import { insertSettingIfAbsent, readSetting } from '../../db/queries/settings.queries.js';
import type { Logger } from '../logger.js';

const SECRET_SETTING = 'image_url_secret';

/** Public path of a stored image (the `:id` route of compat). */
export const IMAGE_FILES_PATH = '/v1/images/files';

/** How often expired images are deleted, and how many per statement. */
const SWEEP_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 500;

const IMAGE_ID = /^img_[0-9a-f]{32}$/;
const EXPIRES = /^\d{1,12}$/;

/** What a link's signature and expiry say, before any row is read. */
export type LinkCheck = 'valid' | 'bad-signature' | 'expired';

export interface GeneratedImageStoreOptions {
  /** Lifetime of an image and of its links, seconds. */
  ttlSeconds: number;
  /** Where clients reach the gateway (`PUBLIC_BASE_URL`, or the listen address until the server tells the one it got). */
  origin: string;
  log: Logger;
}

export class GeneratedImageStore {
  private secret: Buffer | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<unknown> | undefined;
  private linkOrigin: string;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: GeneratedImageStoreOptions,
  ) {
    this.linkOrigin = options.origin;
  }

  /** Reads (or, on the first start of an installation, makes) the signing secret and starts the sweep. */
  async start(): Promise<void> {
    let stored = await readSetting(this.db, SECRET_SETTING);
    if (typeof stored !== 'string') stored = await insertSettingIfAbsent(this.db, SECRET_SETTING, randomBytes(32).toString('hex'));
    if (typeof stored !== 'string' || !/^[0-9a-f]{64}$/.test(stored)) throw new Error(`the setting ${SECRET_SETTING} is not a 32-byte hex secret`);
    this.secret = Buffer.from(stored, 'hex');
    this.timer = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((error: Error) => this.options.log.warn('images.sweep_failed', { message: error.message }))
        .finally(() => (this.sweeping = undefined));
    }, SWEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  get ttlSeconds(): number {
    return this.options.ttlSeconds;
  }

  /** The origin links are built on (no trailing slash). */
  get origin(): string {
    return this.linkOrigin;
  }

  /** The server listens (on a port chosen at start, maybe): links without `PUBLIC_BASE_URL` go there. */
  useListenOrigin(origin: string): void {
    this.linkOrigin = origin;
  }

  /** Keeps an image for the configured lifetime; answers its signed path. */
  async save(accountId: string, bytes: Uint8Array, contentType: string, now = new Date()): Promise<string> {
    const id = `img_${randomBytes(16).toString('hex')}`;
    const expires = Math.floor(now.getTime() / 1000) + this.options.ttlSeconds;
    await insertGeneratedImage(this.db, { id, accountId, contentType, bytes, expiresAt: new Date(expires * 1000) });
    return this.signedPath(id, expires);
  }

  /** The path with query of a link to `id` valid until `expires` (unix seconds). */
  signedPath(id: string, expires: number): string {
    return `${IMAGE_FILES_PATH}/${id}?expires=${expires}&signature=${this.sign(id, String(expires))}`;
  }

  /** Checks a link's signature (constant-time) and expiry; reads nothing. */
  checkLink(id: string, expires: string, signature: string, now = new Date()): LinkCheck {
    if (!IMAGE_ID.test(id) || !EXPIRES.test(expires)) return 'bad-signature';
    const expected = Buffer.from(this.sign(id, expires), 'utf8');
    const given = Buffer.from(signature, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad-signature';
    return Number(expires) * 1000 <= now.getTime() ? 'expired' : 'valid';
  }

  /** An image still in its lifetime, of an account not disabled (call only after {@link checkLink} said `valid`). */
  read(id: string, now = new Date()): Promise<{ contentType: string; bytes: Uint8Array; expiresAt: Date } | undefined> {
    return findLiveGeneratedImage(this.db, id, now);
  }

  /** Deletes every image expired at `now`, a batch at a time; answers how many went. */
  async sweep(now = new Date()): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await deleteExpiredGeneratedImages(this.db, now, SWEEP_BATCH);
      total += deleted;
      if (deleted < SWEEP_BATCH) return total;
    }
  }

  private sign(id: string, expires: string): string {
    if (!this.secret) throw new Error('the generated image store was not started');
    return createHmac('sha256', this.secret).update(`${id}.${expires}`).digest('base64url');
  }
}

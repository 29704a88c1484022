import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Database tables. Money columns are integer micro-credits (1 credit =
 * 1,000,000 micro-credits), stored as BIGINT and read as JS numbers (exact up
 * to 2^53 micro-credits, i.e. 9 billion credits).
 */
export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  providers: ProvidersTable;
  models: ModelsTable;
  usage: UsageTable;
  ledger: LedgerTable;
  settings: SettingsTable;
  credit_holds: CreditHoldsTable;
  instances: InstancesTable;
  rate_limits: RateLimitsTable;
  stored_responses: StoredResponsesTable;
  videos: VideosTable;
  job_holds: JobHoldsTable;
  generated_images: GeneratedImagesTable;
  access_grants: AccessGrantsTable;
  usage_reviews: UsageReviewsTable;
  usage_review_actions: UsageReviewActionsTable;
  users: UsersTable;
  user_sessions: UserSessionsTable;
}

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface AccountsTable {
  id: string;
  name: string;
  /** `free`, `pro` or any operator-defined paid plan. */
  plan: string;
  disabled: Generated<boolean>;
  /** Regular balance, micro-credits; spent first. */
  current_credits: Generated<number>;
  /** Persistent balance, micro-credits; spent after the regular balance. */
  vault_credits: Generated<number>;
  /** Sum of open holds of all instances (see credit_holds), micro-credits. */
  held: Generated<number>;
  /** Charges in the current reset cycle, micro-credits (`credits_used`). */
  cycle_spent: Generated<number>;
  /** Spend cap per reset cycle, micro-credits; null = no cap. */
  daily_limit: number | null;
  /** Allowed client addresses and CIDR ranges; empty = any address. */
  ip_allowlist: ColumnType<string[], string, string>;
  /**
   * Legacy account-wide flag of the restricted family. Access comes from `access_grants`;
   * the flag mirrors whether the account held a grant at its last grant change.
   */
  restricted_access: Generated<boolean>;
  reset_cycle_days: Generated<number>;
  last_reset: Timestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  key_hash: string;
  /** Shown to people: `sk-umg-` … last four. */
  display_prefix: string;
  last_four: string;
  enabled: Generated<boolean>;
  created_at: Generated<Date>;
  last_used_at: Date | null;
  deleted_at: Date | null;
}

export interface ProvidersTable {
  id: string;
  kind: string;
  base_url: string;
  /** A reference such as `env:OPENAI_API_KEY`, never the secret itself. */
  api_key_ref: string | null;
  headers: ColumnType<Record<string, string>, string, string>;
  options: ColumnType<Record<string, unknown>, string, string>;
  updated_at: Generated<Date>;
}

export interface ModelsTable {
  id: string;
  owned_by: string;
  /** Unix seconds when the model first entered the catalog. */
  created: number;
  /** The catalog entry as declared (provider, upstreamModel, endpoints, pricing, deployments…). */
  definition: ColumnType<Record<string, unknown>, string, string>;
  position: number;
  updated_at: Generated<Date>;
}

export interface UsageTable {
  id: Generated<number>;
  request_id: string;
  account_id: string;
  key_id: string | null;
  model: string;
  endpoint: string;
  provider: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  /** Media units (images, seconds, characters) where the endpoint bills them. */
  units: number;
  /** HTTP status the client saw (200 for streams that started). */
  status: number;
  error_code: string | null;
  stream: boolean;
  aborted: boolean;
  latency_ms: number;
  /** Charged amount, micro-credits, after discount. */
  cost: number;
  /** The price used, micro-credits per unit, so the charge can be recomputed. */
  price: ColumnType<Record<string, unknown>, string, string>;
  discount_percentage: number;
  created_at: Timestamp;
}

export interface LedgerTable {
  id: Generated<number>;
  account_id: string;
  /** `opening`, `topup`, `charge`, `adjustment`, `reset`. */
  kind: string;
  /** Signed change of current_credits, micro-credits. */
  current_delta: number;
  /** Signed change of vault_credits, micro-credits. */
  vault_delta: number;
  usage_id: number | null;
  request_id: string | null;
  note: string | null;
  /** Usage cost of this charge that the balance could not cover (balances never go negative), micro-credits. */
  uncharged: Generated<number>;
  created_at: Generated<Date>;
}

export interface SettingsTable {
  key: string;
  value: ColumnType<unknown, string, string>;
}

/** Open holds per gateway instance and account; recovered when an instance stops heartbeating. */
export interface CreditHoldsTable {
  instance_id: string;
  account_id: string;
  amount: number;
}

export interface InstancesTable {
  id: string;
  started_at: Generated<Date>;
  heartbeat_at: Timestamp;
}

/** Requests per API key and fixed one-minute window (database rate limiter, used without Redis); windows older than 5 minutes are pruned. */
export interface RateLimitsTable {
  key_id: string;
  /** Start of the one-minute window (a whole UTC minute). */
  window_start: ColumnType<Date, Date | string, Date | string>;
  count: Generated<number>;
}

/** What `previous_response_id` needs of an answer given through a bridge: the whole conversation, per account. */
export interface StoredResponsesTable {
  id: string;
  account_id: string;
  model: string;
  /** The conversation as JSON text (see the 2026-11-23T0010 migration). */
  conversation: string;
  created_at: Generated<Date>;
}

export type Account = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type AccountUpdate = Updateable<AccountsTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type UsageRow = Selectable<UsageTable>;
export type NewUsageRow = Insertable<UsageTable>;

/** A video's stored file: where it is in the video storage, its type and size. */
export interface VideoAssetRecord {
  key: string;
  contentType: string;
  size: number;
}

/** The stored files of a completed video. */
export interface VideoAssetsRecord {
  video: VideoAssetRecord;
  thumbnail: VideoAssetRecord;
  spritesheet: VideoAssetRecord;
}

/** An uploaded `input_reference`, kept in the video storage until the video is deleted. */
export interface VideoInputReferenceRecord {
  key: string;
  filename: string;
  contentType: string;
  size: number;
}

/**
 * A video generation task and its job (one row for both). The task's states
 * move only along GAPS.md's transitions (a trigger refuses any other move);
 * the job columns are the queue: an instance runs a job while it holds the
 * lease (`locked_by`, `locked_until`), renews it while it works, and any
 * instance takes the job over once the lease has run out.
 */
export interface VideosTable {
  /** `video_` + 32 random base62 characters. */
  id: string;
  account_id: string;
  key_id: string | null;
  /** The create request's id (logs). */
  request_id: string;
  /** Catalog model id. */
  model: string;
  prompt: string;
  /** `WIDTHxHEIGHT`. */
  size: string;
  /** Requested duration, seconds. */
  seconds: number;
  /** `pending`, `processing`, `completed`, `failed`. */
  status: Generated<string>;
  /** Why the task failed. */
  error: string | null;
  /** 0–100, as the provider reports it. */
  progress: Generated<number>;
  /** Real duration of the finished video, seconds. */
  duration: number | null;
  /** The account's discount when the task was created; the charge uses it too. */
  discount_percentage: number;
  input_reference: ColumnType<VideoInputReferenceRecord | null, string | null, string | null>;
  /** Set when the task completes. */
  assets: ColumnType<VideoAssetsRecord | null, string | null, string | null>;
  /** Catalog provider of the deployment that took the job (set at the upstream create). */
  provider_id: string | null;
  upstream_model: string | null;
  /** The provider's id of the generation. */
  provider_job_id: string | null;
  /** Failed tries so far (retried with backoff up to a bound). */
  attempts: Generated<number>;
  /** Polls of the provider so far (the poll interval grows with them). */
  polls: Generated<number>;
  /** Not to be run before this time (the next poll, or the retry after a failure). */
  run_after: Timestamp;
  /** Instance holding the lease. */
  locked_by: string | null;
  /** End of the lease; after it, any instance may take the job. */
  locked_until: Date | null;
  created_at: Generated<Date>;
  completed_at: Date | null;
  updated_at: Generated<Date>;
  /** When the finished video's files are deleted (VIDEO_RETENTION_HOURS after it finished); null: kept for ever. Past and `assets` null: they were. */
  expires_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/**
 * Credit held for a background job (a video), owned by the job rather than
 * by an instance: instance recovery never touches it, and it ends exactly
 * once, when the job is settled or released. Counted in `accounts.held`.
 */
export interface JobHoldsTable {
  job_id: string;
  account_id: string;
  amount: number;
  created_at: Generated<Date>;
}

export type Video = Selectable<VideosTable>;
/**
 * Images the gateway generated or edited and serves by signed link
 * (`response_format: url`), readable by every instance; rows past
 * `expires_at` are never served and are deleted by a periodic sweep.
 */
export interface GeneratedImagesTable {
  /** `img_…`, random: part of the signed link. */
  id: string;
  /** The account whose request made it. */
  account_id: string;
  /** `image/png` (mock), or what the provider produced. */
  content_type: string;
  /** The image file (pg answers a Buffer, PGlite a Uint8Array). */
  bytes: ColumnType<Uint8Array, Uint8Array, never>;
  created_at: Generated<Date>;
  /** When its links stop working (creation + `IMAGE_URL_TTL_SECONDS`). */
  expires_at: ColumnType<Date, Date, never>;
}

/** An account's access grant to one restricted model family (revoked grants stay as history). */
export interface AccessGrantsTable {
  /** `grant_…` */
  id: string;
  account_id: string;
  /** Catalog family name. */
  family: string;
  /** Who granted it (`admin-token`, a dashboard user, `migration`). */
  granted_by: string;
  granted_at: Generated<Date>;
  /** Null: never expires. */
  expires_at: Date | null;
  note: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoke_note: string | null;
}

/** A restricted-family request the usage check flagged or rejected, kept for staff review. */
export interface UsageReviewsTable {
  /** `rev_…` */
  id: string;
  /** Insertion order: the queue's keyset and cursor. */
  seq: ColumnType<number, never, never>;
  account_id: string;
  key_id: string | null;
  model: string;
  family: string;
  endpoint: string;
  request_id: string;
  client_address: string | null;
  /** `flag` (served) or `reject` (refused with USAGE_CHECK_REJECTED). */
  decision: 'flag' | 'reject';
  rule_id: string | null;
  matched_rules: ColumnType<string[], string, string>;
  categories: ColumnType<string[], string, string>;
  scores: ColumnType<Record<string, number>, string, string>;
  roleplay: boolean;
  /** At most 400 characters of the prompt (a CHECK constraint holds it); nothing more of the prompt is kept. */
  excerpt: string;
  status: Generated<'open' | 'resolved'>;
  /** The last action taken. */
  resolution: ReviewAction | null;
  resolved_by: string | null;
  resolved_at: Date | null;
  resolution_note: string | null;
  created_at: Generated<Date>;
}

export type ReviewAction = 'dismiss' | 'warn' | 'revoke_grant' | 'disable_account';

/** Every action a reviewer took on a review item, with who and when. */
export interface UsageReviewActionsTable {
  id: Generated<number>;
  review_id: string;
  account_id: string;
  action: ReviewAction;
  actor: string;
  note: string | null;
  created_at: Generated<Date>;
}
/** People who sign in to the dashboard (owners and members of one account, or staff). */
export interface UsersTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** argon2id PHC string; never leaves the server. */
  password_hash: string;
  /** Null for staff. */
  account_id: string | null;
  role: 'owner' | 'member' | 'staff';
  created_at: Generated<Date>;
  updated_at: Timestamp;
}
export type User = Selectable<UsersTable>;

/** Dashboard sessions; the cookie carries the token, the row only its SHA-256. */
export interface UserSessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  /** Sent back by the browser in `x-csrf-token` on every mutation. */
  csrf_token: string;
  created_at: Generated<Date>;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  client_address: string | null;
}
export type UserSession = Selectable<UserSessionsTable>;

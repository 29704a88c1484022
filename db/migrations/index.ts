import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './2026-11-22T0000-initial.js';
import * as rateLimits from './2026-11-22T0100-rate-limits.js';
import * as storedResponses from './2026-11-22T0200-stored-responses.js';
import * as storedResponsesText from './2026-11-23T0010-stored-responses-text.js';
import * as videos from './2026-11-23T0200-videos.js';
import * as generatedImages from './2026-11-23T0100-generated-images.js';
import * as restrictedFamily from './2026-11-24T0100-restricted-family.js';
import * as usersSessions from './2026-11-24T0200-users-sessions.js';
import * as settlement from './2026-11-24T0400-settlement.js';
import * as videoFairnessRetention from './2026-11-25T0100-video-fairness-retention.js';

/** Migrations in order; names sort by their timestamp. */
const MIGRATIONS: Record<string, Migration> = {
  '2026-11-22T0000-initial': initial,
  '2026-11-22T0100-rate-limits': rateLimits,
  '2026-11-22T0200-stored-responses': storedResponses,
  '2026-11-23T0010-stored-responses-text': storedResponsesText,
  '2026-11-23T0200-videos': videos,
  '2026-11-23T0100-generated-images': generatedImages,
  '2026-11-24T0100-restricted-family': restrictedFamily,
  '2026-11-24T0200-users-sessions': usersSessions,
  '2026-11-24T0400-settlement': settlement,
  '2026-11-25T0100-video-fairness-retention': videoFairnessRetention,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1)!;

import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.js';

/** A query runs on the database or inside a transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;

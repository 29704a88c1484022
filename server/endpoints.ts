/**
 * The public paths of the gateway's operations: what a catalog model may advertise under
 * `endpoints` and what the provider registry maps to an operation. A leaf: every layer may
 * import it, it imports nothing.
 */

/** Every public path a model may advertise. */
export const ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1/responses',
  '/v1/responses/compact',
  '/v1/embeddings',
  '/v1/moderations',
  '/v1/images/generations',
  '/v1/images/edits',
  '/v1/audio/speech',
  '/v1/audio/transcriptions',
  '/v1/audio/translations',
  '/v1/videos',
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

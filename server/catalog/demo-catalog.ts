import type { CatalogFile } from './catalog.schema.js';

const CHAT = ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/responses/compact'] as const;

/**
 * The catalog used when no GATEWAY_CONFIG is given: models of the built-in
 * offline `mock` provider, one or more per endpoint of SPEC.md, so that a new
 * user can try every route without a provider account.
 */
export const DEMO_CATALOG: CatalogFile = {
  providers: [{ id: 'mock', kind: 'mock' }],
  models: [
    { id: 'mock-chat', ownedBy: 'umg', provider: 'mock', upstreamModel: 'mock-chat', endpoints: [...CHAT], pricing: { input: 1, output: 2 } },
    {
      id: 'mock-embedding-small',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-embedding-small',
      endpoints: ['/v1/embeddings'],
      pricing: { input: 0.02, output: 0 },
      dimensions: 1536,
    },
    {
      id: 'mock-embedding-large',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-embedding-large',
      endpoints: ['/v1/embeddings'],
      pricing: { input: 0.13, output: 0 },
      dimensions: 3072,
      dimensionsAdjustable: true,
    },
    { id: 'text-moderation-latest', ownedBy: 'umg', provider: 'mock', upstreamModel: 'text-moderation-latest', endpoints: ['/v1/moderations'], pricing: { input: 0, output: 0 } },
    { id: 'text-moderation-stable', ownedBy: 'umg', provider: 'mock', upstreamModel: 'text-moderation-stable', endpoints: ['/v1/moderations'], pricing: { input: 0, output: 0 } },
    {
      id: 'mock-image',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-image',
      endpoints: ['/v1/images/generations', '/v1/images/edits'],
      pricing: { input: 0, output: 0, image: 0.04 },
      // Everything SPEC lists, so each field can be tried: every size, both quality vocabularies, both styles, streaming.
      images: {
        sizes: ['256x256', '512x512', '1024x1024', '1536x1024', '1024x1536', '2048x2048', '4096x4096', 'auto'],
        qualities: ['standard', 'hd', 'low', 'medium', 'high', 'auto'],
        styles: ['vivid', 'natural'],
        streaming: true,
      },
    },
    { id: 'tts-1', ownedBy: 'umg', provider: 'mock', upstreamModel: 'tts-1', endpoints: ['/v1/audio/speech'], pricing: { input: 0, output: 0, character: 0.000015 } },
    { id: 'tts-1-hd', ownedBy: 'umg', provider: 'mock', upstreamModel: 'tts-1-hd', endpoints: ['/v1/audio/speech'], pricing: { input: 0, output: 0, character: 0.00003 } },
    {
      id: 'mock-whisper',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-whisper',
      endpoints: ['/v1/audio/transcriptions', '/v1/audio/translations'],
      pricing: { input: 0, output: 0, second: 0.0001 },
    },
    {
      id: 'mock-video',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-video',
      endpoints: ['/v1/videos'],
      pricing: { input: 0, output: 0, second: 0.1 },
      videos: { sizes: ['1280x720', '720x1280', '1920x1080', '1080x1920', '640x360', '360x640'], seconds: { min: 1, max: 20 }, defaultSeconds: 4 },
    },
    {
      id: 'mock-restricted',
      ownedBy: 'umg',
      provider: 'mock',
      upstreamModel: 'mock-restricted',
      endpoints: [...CHAT],
      pricing: { input: 3, output: 15 },
      family: 'restricted',
    },
  ],
};

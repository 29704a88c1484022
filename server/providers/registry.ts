/**
 * The one place that maps a provider kind to the operations it serves and
 * the adapter of each. Routing, failover and metering are shared by every
 * operation; nothing outside this file switches on a provider kind.
 */
import type { Endpoint } from '../catalog/catalog.schema.js';
import { anthropicChatAdapter, anthropicCountTokensAdapter } from './anthropic/anthropic.adapter.js';
import { localCountTokensAdapter } from './local-count.js';
import { mockChatAdapter, mockCountTokensAdapter } from './mock/mock.adapters.js';
import { mockEmbeddingsAdapter } from './mock/mock-embeddings.adapter.js';
import { mockImagesAdapter } from './mock/mock-images.adapter.js';
import { mockModerationsAdapter } from './mock/mock-moderations.adapter.js';
import { openAIChatAdapter } from './openai/openai.adapter.js';
import { openAIEmbeddingsAdapter } from './openai/openai-embeddings.adapter.js';
import { openAIImagesAdapter } from './openai/openai-images.adapter.js';
import { openAIModerationsAdapter } from './openai/openai-moderations.adapter.js';
import type { ChatAdapter, CountTokensAdapter, EmbeddingsAdapter, ImagesAdapter, ModerationsAdapter, ProviderKind } from './types.js';

/** The adapter type of each operation. */
export interface OperationAdapters {
  chat: ChatAdapter;
  countTokens: CountTokensAdapter;
  images: ImagesAdapter;
  embeddings: EmbeddingsAdapter;
  moderations: ModerationsAdapter;
}

export type Operation = keyof OperationAdapters;

/** A provider kind: the adapters it declares. An operation without one is not served by the kind. */
export interface ProviderKindDefinition {
  kind: ProviderKind;
  adapters: Partial<OperationAdapters>;
}

export const PROVIDER_KINDS: Record<ProviderKind, ProviderKindDefinition> = {
  openai: {
    kind: 'openai',
    adapters: {
      chat: openAIChatAdapter,
      countTokens: localCountTokensAdapter,
      images: openAIImagesAdapter,
      embeddings: openAIEmbeddingsAdapter,
      moderations: openAIModerationsAdapter,
    },
  },
  anthropic: { kind: 'anthropic', adapters: { chat: anthropicChatAdapter, countTokens: anthropicCountTokensAdapter } },
  mock: {
    kind: 'mock',
    adapters: {
      chat: mockChatAdapter,
      countTokens: mockCountTokensAdapter,
      images: mockImagesAdapter,
      embeddings: mockEmbeddingsAdapter,
      moderations: mockModerationsAdapter,
    },
  },
};

/** The operation behind each public endpoint; undefined for endpoints no operation serves yet. */
export const ENDPOINT_OPERATIONS: Partial<Record<Endpoint, Operation>> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'chat',
  '/v1/responses': 'chat',
  '/v1/responses/compact': 'chat',
  '/v1/messages/count_tokens': 'countTokens',
  '/v1/images/generations': 'images',
  '/v1/images/edits': 'images',
  '/v1/embeddings': 'embeddings',
  '/v1/moderations': 'moderations',
};

export function adapterFor<Op extends Operation>(kind: ProviderKind, operation: Op): OperationAdapters[Op] | undefined {
  return PROVIDER_KINDS[kind].adapters[operation];
}

/** Whether a provider of this kind can serve the endpoint (the catalog refuses a model that declares one it cannot). */
export function kindServesEndpoint(kind: ProviderKind, endpoint: Endpoint): boolean {
  const operation = ENDPOINT_OPERATIONS[endpoint];
  return operation === undefined || adapterFor(kind, operation) !== undefined;
}

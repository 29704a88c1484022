/**
 * The one place that maps a provider kind to the operations it serves and
 * the adapter of each. Routing, failover and metering are shared by every
 * operation; nothing outside this file switches on a provider kind.
 */
import type { Endpoint } from '../endpoints.js';
import { anthropicChatAdapter, anthropicCountTokensAdapter } from './anthropic/anthropic.adapter.js';
import { azureChatAdapter, azureEmbeddingsAdapter, azureImagesAdapter, azureSpeechAdapter, azureTranscriptionAdapter } from './azure/azure.adapter.js';
import { bedrockChatAdapter } from './bedrock/bedrock.adapter.js';
import { localCountTokensAdapter } from './local-count.js';
import { mockChatAdapter, mockCountTokensAdapter } from './mock/mock.adapters.js';
import { mockEmbeddingsAdapter } from './mock/mock-embeddings.adapter.js';
import { mockImagesAdapter } from './mock/mock-images.adapter.js';
import { mockModerationsAdapter } from './mock/mock-moderations.adapter.js';
import { mockSpeechAdapter } from './mock/mock-speech.adapter.js';
import { mockTranscriptionAdapter } from './mock/mock-transcription.adapter.js';
import { mockVideosAdapter } from './mock/mock-videos.adapter.js';
import { openAIChatAdapter } from './openai/openai.adapter.js';
import { openAIEmbeddingsAdapter } from './openai/openai-embeddings.adapter.js';
import { openAIImagesAdapter } from './openai/openai-images.adapter.js';
import { openAIModerationsAdapter } from './openai/openai-moderations.adapter.js';
import { openAISpeechAdapter } from './openai/openai-speech.adapter.js';
import { openAITranscriptionAdapter } from './openai/openai-transcription.adapter.js';
import { openAIVideosAdapter } from './openai/openai-videos.adapter.js';
import type {
  ChatAdapter,
  CountTokensAdapter,
  EmbeddingsAdapter,
  ImagesAdapter,
  ModerationsAdapter,
  ProviderKind,
  SpeechAdapter,
  TranscriptionAdapter,
  VideosAdapter,
} from './types.js';

/** The adapter type of each operation. */
export interface OperationAdapters {
  chat: ChatAdapter;
  countTokens: CountTokensAdapter;
  images: ImagesAdapter;
  embeddings: EmbeddingsAdapter;
  moderations: ModerationsAdapter;
  speech: SpeechAdapter;
  transcription: TranscriptionAdapter;
  videos: VideosAdapter;
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
      speech: openAISpeechAdapter,
      transcription: openAITranscriptionAdapter,
      videos: openAIVideosAdapter,
    },
  },
  anthropic: { kind: 'anthropic', adapters: { chat: anthropicChatAdapter, countTokens: anthropicCountTokensAdapter } },
  // Azure OpenAI has no moderations endpoint, and its video generation is not OpenAI's `/videos` API.
  azure: {
    kind: 'azure',
    adapters: {
      chat: azureChatAdapter,
      countTokens: localCountTokensAdapter,
      images: azureImagesAdapter,
      embeddings: azureEmbeddingsAdapter,
      speech: azureSpeechAdapter,
      transcription: azureTranscriptionAdapter,
    },
  },
  bedrock: { kind: 'bedrock', adapters: { chat: bedrockChatAdapter, countTokens: localCountTokensAdapter } },
  mock: {
    kind: 'mock',
    adapters: {
      chat: mockChatAdapter,
      countTokens: mockCountTokensAdapter,
      images: mockImagesAdapter,
      embeddings: mockEmbeddingsAdapter,
      moderations: mockModerationsAdapter,
      speech: mockSpeechAdapter,
      transcription: mockTranscriptionAdapter,
      videos: mockVideosAdapter,
    },
  },
};

/** The operation behind each public endpoint. */
export const ENDPOINT_OPERATIONS: Record<Endpoint, Operation> = {
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'chat',
  '/v1/responses': 'chat',
  '/v1/responses/compact': 'chat',
  '/v1/messages/count_tokens': 'countTokens',
  '/v1/images/generations': 'images',
  '/v1/images/edits': 'images',
  '/v1/embeddings': 'embeddings',
  '/v1/moderations': 'moderations',
  '/v1/audio/speech': 'speech',
  '/v1/audio/transcriptions': 'transcription',
  '/v1/audio/translations': 'transcription',
  '/v1/videos': 'videos',
};

export function adapterFor<Op extends Operation>(kind: ProviderKind, operation: Op): OperationAdapters[Op] | undefined {
  return PROVIDER_KINDS[kind].adapters[operation];
}

/** Whether a provider of this kind can serve the endpoint (the catalog refuses a model that declares one it cannot). */
export function kindServesEndpoint(kind: ProviderKind, endpoint: Endpoint): boolean {
  return adapterFor(kind, ENDPOINT_OPERATIONS[endpoint]) !== undefined;
}

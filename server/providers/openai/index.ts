/** The OpenAI chat completions format, client side (compat/, routers/) and provider side (the adapter). */
export * from './openai.wire.js';
export { fromOpenAIChatRequest, readImageSource } from './from-openai-request.js';
export { toOpenAIChatRequest, mapBudgetToEffort, type ToOpenAIChatRequestOptions } from './to-openai-request.js';
export { fromOpenAIChatResponse } from './from-openai-response.js';
export { toOpenAIChatResponse, type ToOpenAIChatResponseOptions } from './to-openai-response.js';
export { mapOpenAIFinishReason, toOpenAIFinishReason } from './map-openai-finish-reason.js';
export { mapOpenAIUsage, toOpenAIUsage } from './map-openai-usage.js';
export { OpenAIChatStreamDecoder } from './openai-stream.js';
export { ChatStreamEncoder, type ChatStreamEncoderOptions, type ChatStreamFrame } from './chat-stream-encoder.js';
export { parseOpenAIError, redactSecrets } from './openai-errors.js';
export { openAIChatAdapter, buildOpenAIHeaders } from './openai.adapter.js';

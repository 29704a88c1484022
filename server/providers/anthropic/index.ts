/** The Anthropic messages format, client side (compat/, routers/) and provider side (the adapter). */
export * from './anthropic.wire.js';
export * from './anthropic-answer.wire.js';
export { fromAnthropicRequest, ANTHROPIC_OUTPUT_SCHEMA_NAME } from './from-anthropic-request.js';
export {
  toAnthropicRequest,
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  MIN_THINKING_BUDGET,
  THINKING_BUDGET_BY_EFFORT,
  JSON_OBJECT_INSTRUCTION,
} from './to-anthropic-request.js';
export { toAnthropicToolId } from './to-anthropic-messages.js';
export { fromAnthropicResponse, fromAnthropicUsage, ANTHROPIC_PROVIDER } from './from-anthropic-response.js';
export { toAnthropicResponse, toAnthropicUsage, toToolInputObject } from './to-anthropic-response.js';
export { mapAnthropicStopReason, toAnthropicStopReason } from './map-anthropic-stop-reason.js';
export { AnthropicStreamDecoder } from './anthropic-stream.js';
export { MessagesStreamEncoder, type MessagesStreamEncoderOptions } from './messages-stream-encoder.js';
export { parseAnthropicError, anthropicErrorType, parseRetryAfter } from './anthropic-errors.js';
export {
  anthropicChatAdapter,
  buildAnthropicHeaders,
  buildAnthropicMessagesRequest,
  buildAnthropicCountTokensRequest,
  ANTHROPIC_VERSION,
  type AnthropicForwardedHeaders,
} from './anthropic.adapter.js';

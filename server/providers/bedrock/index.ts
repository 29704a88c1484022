/** The Amazon Bedrock provider kind (Converse and ConverseStream, AWS Signature V4). */
export { bedrockChatAdapter, bedrockUrl, buildBedrockRequest } from './bedrock.adapter.js';
export { bedrockEndpoint, signBedrockRequest, BEDROCK_SIGNING_SERVICE } from './bedrock-signing.js';
export { toBedrockRequest, isBedrockClaudeModel, toBedrockToolUseId, BEDROCK_JSON_OBJECT_INSTRUCTION } from './to-bedrock-request.js';
export { fromBedrockResponse, fromBedrockUsage } from './from-bedrock-response.js';
export { BedrockEventStreamFramer, BedrockStreamDecoder, type BedrockStreamMessage } from './bedrock-stream.js';
export { parseBedrockError, normalizeBedrockErrorType, BEDROCK_PROVIDER } from './bedrock-errors.js';
export { mapBedrockStopReason } from './map-bedrock-stop-reason.js';

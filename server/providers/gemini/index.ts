/** The `gemini` provider kind (Gemini API and Vertex AI). */
export { geminiChatAdapter, geminiCountTokensAdapter, geminiEmbeddingsAdapter, geminiMethodUrl, buildGeminiHeaders } from './gemini.adapter.js';
export { toGeminiRequest, GEMINI_SIGNATURE_PREFIX, GEMINI_THINKING_BUDGET_BY_EFFORT } from './to-gemini-request.js';
export { fromGeminiResponse, fromGeminiUsage, GEMINI_PROVIDER } from './from-gemini-response.js';
export { GeminiStreamDecoder } from './gemini-stream.js';
export { parseGeminiError, redactGoogleCredentials } from './gemini-errors.js';
export { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
export { onVertexAccessToken, vertexAccessToken } from './vertex-auth.js';

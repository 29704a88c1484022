/**
 * Gemini dialect of the upstream test server: Google's `generateContent`
 * wire format over real HTTP, on the Gemini API paths
 * (`/v1beta/models/{m}:generateContent`, `:streamGenerateContent?alt=sse`,
 * `:countTokens`, `:batchEmbedContents`, key in `x-goog-api-key`) and the
 * Vertex AI paths (`/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:…`,
 * `:predict` for embeddings, an OAuth bearer token). It is also the OAuth
 * token endpoint (`POST /token`): it checks the service account's signed
 * assertion (RS256, against the public key it was given) and issues
 * `ya29.` tokens, so Vertex's exchange runs for real, locally.
 *
 * Default answers are derived from the request only:
 * - text: `Echo: <last user text>` (texts and function responses of the last
 *   user turn); with `responseMimeType: application/json`, the JSON text
 *   `{"echo":"<last user text>"}`; `stopSequences` cut it, `maxOutputTokens`
 *   truncates it (`MAX_TOKENS`).
 * - a `functionCall` instead when `toolConfig.functionCallingConfig.mode` is
 *   `ANY`: the first allowed (else declared) function, args
 *   `options.toolArguments` or `{"input":"<last user text>"}`.
 * - a thought part `Thinking about: <text>` first when `includeThoughts` is set.
 * - usage: prompt = estimateTokens(every string of systemInstruction,
 *   contents and tools), the same number countTokens answers; candidates =
 *   estimateTokens(answer text or name + JSON args); thoughts =
 *   estimateTokens(thought text); cached = `options.cachedTokens` (at most the prompt).
 * Streams send `data: <chunk>\r\n\r\n` frames as Google does.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import {
  applyStopSequences,
  collectPromptText,
  estimateTokens,
  isRecord,
  splitText,
  startUpstreamServer,
  truncateToTokens,
  type RecordedRequest,
  type UpstreamAnswer,
  type UpstreamDialect,
  type UpstreamErrorDetails,
  type UpstreamServer,
  type UpstreamServerOptions,
} from './upstream-server.js';

export interface GeminiUpstreamOptions extends UpstreamServerOptions {
  /** Vertex AI: the service account whose assertions `/token` accepts. */
  serviceAccount?: { email: string; publicKeyPem: string };
  /** Lifetime of issued tokens in seconds (default 3600; a `?lifetime=` on the token URL overrides it). */
  tokenLifetimeSeconds?: number;
  /** `cachedContentTokenCount` of every answer (default 0). */
  cachedTokens?: number;
}

/** The Gemini test server, with what its token endpoint issued. */
export interface GeminiUpstream extends UpstreamServer {
  /** `{origin}/v1beta`: the Gemini API base URL. */
  readonly geminiBaseUrl: string;
  /** `{origin}/v1`: the Vertex AI base URL. */
  readonly vertexBaseUrl: string;
  /** `{origin}/token`: the OAuth token endpoint. */
  readonly tokenUrl: string;
  /** Access tokens issued, in order. */
  readonly issuedTokens: string[];
}

export async function startGeminiUpstream(options: GeminiUpstreamOptions = {}): Promise<GeminiUpstream> {
  const issuedTokens: string[] = [];
  const server = await startUpstreamServer(createGeminiDialect(options, issuedTokens), options);
  return Object.assign(server, {
    geminiBaseUrl: `${server.origin}/v1beta`,
    vertexBaseUrl: `${server.origin}/v1`,
    tokenUrl: `${server.origin}/token`,
    issuedTokens,
  });
}

/** HTTP status → `google.rpc.Code` name. */
function grpcStatus(status: number): string {
  switch (status) {
    case 400:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

/** `{error: {code, message, status, details}}`; a 429 carries Google's RetryInfo. */
export function toGeminiErrorBody(status: number, details: UpstreamErrorDetails = {}): unknown {
  return {
    error: {
      code: status,
      message: details.message ?? `Upstream test server answered ${status}.`,
      status: details.errorType ?? grpcStatus(status),
      ...(status === 429 ? { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1s' }] } : {}),
    },
  };
}

/** One SSE frame as Google writes it. */
function geminiFrame(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

const GEMINI_API_PATH = /^\/v1beta\/models\/([^/:]+):([A-Za-z]+)$/;
const VERTEX_PATH = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):([A-Za-z]+)$/;

type Plan = { thought?: string } & ({ kind: 'text'; text: string; finishReason: 'STOP' | 'MAX_TOKENS' } | { kind: 'tool'; name: string; args: Record<string, unknown> });

function createGeminiDialect(options: GeminiUpstreamOptions, issuedTokens: string[]): UpstreamDialect {
  const chunkSize = options.streamChunkSize ?? 4;
  const publicKey: KeyObject | undefined = options.serviceAccount ? createPublicKey(options.serviceAccount.publicKeyPem) : undefined;
  const error = (status: number, message: string): UpstreamAnswer => ({ kind: 'json', status, body: toGeminiErrorBody(status, { message }) });

  function issueToken(request: RecordedRequest): UpstreamAnswer {
    const form = new URLSearchParams(request.rawBody);
    const fail = (description: string): UpstreamAnswer => ({ kind: 'json', status: 400, body: { error: 'invalid_grant', error_description: description } });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return fail('unsupported grant_type');
    const [header, payload, signature] = (form.get('assertion') ?? '').split('.');
    if (!publicKey || !options.serviceAccount || !header || !payload || !signature) return fail('no assertion');
    if (!verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'))) return fail('Invalid JWT Signature.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: string; scope?: string; exp?: number };
    if (claims.iss !== options.serviceAccount.email) return fail('Invalid issuer');
    if (!claims.scope?.includes('https://www.googleapis.com/auth/cloud-platform')) return fail('Invalid scope');
    const token = `ya29.test-token-${issuedTokens.length + 1}-${request.sequence}`;
    issuedTokens.push(token);
    return { kind: 'json', status: 200, body: { access_token: token, expires_in: Number(request.query.lifetime ?? options.tokenLifetimeSeconds ?? 3600), token_type: 'Bearer' } };
  }

  function promptTokens(body: Record<string, unknown>): number {
    return estimateTokens(collectPromptText([body.systemInstruction ?? '', body.contents ?? [], body.tools ?? []]));
  }

  function plan(body: Record<string, unknown>): Plan {
    const lastText = lastUserText(body.contents);
    const config = isRecord(body.generationConfig) ? body.generationConfig : {};
    const thinking = isRecord(config.thinkingConfig) ? config.thinkingConfig : {};
    const thought = thinking.includeThoughts === true ? { thought: `Thinking about: ${lastText}` } : {};
    const toolConfig = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : {};
    const declarations = Array.isArray(body.tools) ? body.tools.flatMap((tool) => (isRecord(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : [])) : [];
    if (toolConfig.mode === 'ANY' && declarations.length > 0) {
      const allowed = Array.isArray(toolConfig.allowedFunctionNames) ? toolConfig.allowedFunctionNames[0] : undefined;
      const first = declarations[0];
      const name = typeof allowed === 'string' ? allowed : isRecord(first) && typeof first.name === 'string' ? first.name : 'tool';
      return { ...thought, kind: 'tool', name, args: options.toolArguments ?? { input: lastText } };
    }
    const text = config.responseMimeType === 'application/json' ? JSON.stringify({ echo: lastText }) : `Echo: ${lastText}`;
    const stops = Array.isArray(config.stopSequences) ? config.stopSequences.filter((stop): stop is string => typeof stop === 'string') : [];
    const stopped = applyStopSequences(text, stops).text;
    const maxTokens = typeof config.maxOutputTokens === 'number' ? config.maxOutputTokens : Number.POSITIVE_INFINITY;
    if (estimateTokens(stopped) > maxTokens) return { ...thought, kind: 'text', text: truncateToTokens(stopped, maxTokens), finishReason: 'MAX_TOKENS' };
    return { ...thought, kind: 'text', text: stopped, finishReason: 'STOP' };
  }

  function answerGenerate(request: RecordedRequest, model: string, stream: boolean): UpstreamAnswer {
    const body = request.body;
    if (!isRecord(body) || !Array.isArray(body.contents) || body.contents.length === 0) return error(400, '* GenerateContentRequest.contents: contents is not specified');
    for (const content of body.contents) {
      if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) return error(400, '* GenerateContentRequest.contents[].parts: contents.parts must not be empty.');
      if (content.role !== 'user' && content.role !== 'model') return error(400, `Please use a valid role: user, model.`);
    }
    const answer = plan(body);
    const responseId = `resp_${request.sequence}`;
    const prompt = promptTokens(body);
    const thoughts = answer.thought === undefined ? 0 : estimateTokens(answer.thought);
    const candidates = answer.kind === 'text' ? estimateTokens(answer.text) : estimateTokens(answer.name + JSON.stringify(answer.args));
    const cached = Math.min(options.cachedTokens ?? 0, prompt);
    const usageMetadata = {
      promptTokenCount: prompt,
      candidatesTokenCount: candidates,
      totalTokenCount: prompt + candidates + thoughts,
      ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
      ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    };
    const finishReason = answer.kind === 'tool' ? 'STOP' : answer.finishReason;
    const thoughtParts = answer.thought === undefined ? [] : [{ text: answer.thought, thought: true }];
    // Gemini signs the first function call of a thinking turn.
    const answerPart = answer.kind === 'text' ? { text: answer.text } : { functionCall: { name: answer.name, args: answer.args }, ...(thoughts > 0 ? { thoughtSignature: `sig_${request.sequence}` } : {}) };
    const chunk = (parts: unknown[], last: boolean): Record<string, unknown> => ({
      candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason } : {}), index: 0 }],
      usageMetadata: last ? usageMetadata : { promptTokenCount: prompt, totalTokenCount: prompt },
      modelVersion: model,
      responseId,
    });
    if (!stream) return { kind: 'json', status: 200, body: chunk([...thoughtParts, answerPart], true) };
    const frames: string[] = [];
    for (const piece of thoughtParts) frames.push(geminiFrame(chunk([piece], false)));
    if (answer.kind === 'text') {
      const pieces = splitText(answer.text, chunkSize);
      pieces.forEach((piece, index) => frames.push(geminiFrame(chunk([{ text: piece }], index === pieces.length - 1))));
      if (pieces.length === 0) frames.push(geminiFrame(chunk([{ text: '' }], true)));
    } else {
      frames.push(geminiFrame(chunk([answerPart], false)), geminiFrame(chunk([{ text: '' }], true)));
    }
    return { kind: 'sse', frames };
  }

  function answerEmbeddings(request: RecordedRequest, vertex: boolean): UpstreamAnswer {
    const body = isRecord(request.body) ? request.body : {};
    const texts: string[] = vertex
      ? (Array.isArray(body.instances) ? body.instances : []).map((instance) => (isRecord(instance) && typeof instance.content === 'string' ? instance.content : ''))
      : (Array.isArray(body.requests) ? body.requests : []).map((item) => collectPromptText(isRecord(item) ? item.content : ''));
    if (texts.length === 0) return error(400, 'no inputs');
    const parameters = isRecord(body.parameters) ? body.parameters : {};
    const first = Array.isArray(body.requests) && isRecord(body.requests[0]) ? body.requests[0] : {};
    const size = Number(vertex ? (parameters.outputDimensionality ?? 8) : (first.outputDimensionality ?? 8));
    const vectorOf = (text: string): number[] => Array.from({ length: size }, (_, index) => ((text.length + index) % 7) / 7);
    if (vertex) return { kind: 'json', status: 200, body: { predictions: texts.map((text) => ({ embeddings: { values: vectorOf(text), statistics: { token_count: estimateTokens(text), truncated: false } } })) } };
    return { kind: 'json', status: 200, body: { embeddings: texts.map((text) => ({ values: vectorOf(text) })) } };
  }

  return {
    requestIdHeader: 'x-request-id',
    check(request) {
      if (request.method === 'POST' && request.path === '/token') return issueToken(request);
      if (VERTEX_PATH.test(request.path)) {
        const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
        if (!token || !issuedTokens.includes(token)) return error(401, 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
      } else if (options.expectedApiKey !== undefined && request.headers['x-goog-api-key'] !== options.expectedApiKey) {
        return error(400, 'API key not valid. Please pass a valid API key.');
      }
      return undefined;
    },
    answer(request) {
      const gemini = GEMINI_API_PATH.exec(request.path);
      const vertex = VERTEX_PATH.exec(request.path);
      const model = gemini?.[1] ?? vertex?.[3];
      const method = gemini?.[2] ?? vertex?.[4];
      if (request.method !== 'POST' || model === undefined) return error(404, `Not found: ${request.path}`);
      switch (method) {
        case 'generateContent':
          return answerGenerate(request, model, false);
        case 'streamGenerateContent':
          if (request.query.alt !== 'sse') return error(400, 'this test server streams only with alt=sse');
          return answerGenerate(request, model, true);
        case 'countTokens': {
          const body = isRecord(request.body) ? request.body : {};
          const inner = vertex ? body : isRecord(body.generateContentRequest) ? body.generateContentRequest : body;
          return { kind: 'json', status: 200, body: { totalTokens: promptTokens(inner) } };
        }
        case 'batchEmbedContents':
          return gemini ? answerEmbeddings(request, false) : error(404, 'batchEmbedContents is a Gemini API method');
        case 'predict':
          return vertex ? answerEmbeddings(request, true) : error(404, 'predict is a Vertex AI method');
        default:
          return error(404, `Unknown method ${method}`);
      }
    },
    errorBody(status, details) {
      return toGeminiErrorBody(status, details);
    },
    errorEventFrame(_request, details) {
      return geminiFrame(toGeminiErrorBody(500, { message: details.message ?? 'Internal error encountered.', errorType: details.errorType }));
    },
    malformedSseFrame() {
      return 'data: {"candidates": [{"content": \r\n\r\n';
    },
  };
}

/** Texts and function responses of the last user turn, joined with a space. */
function lastUserText(contents: unknown): string {
  if (!Array.isArray(contents)) return '';
  for (let index = contents.length - 1; index >= 0; index--) {
    const content = contents[index];
    if (!isRecord(content) || content.role !== 'user' || !Array.isArray(content.parts)) continue;
    const texts: string[] = [];
    for (const part of content.parts) {
      if (!isRecord(part)) continue;
      if (typeof part.text === 'string') texts.push(part.text);
      if (isRecord(part.functionResponse)) texts.push(collectPromptText(part.functionResponse.response));
    }
    return texts.join(' ');
  }
  return '';
}

/**
 * Azure OpenAI dialect of the upstream test server: Azure's paths, headers,
 * error bodies and content-filter annotations around the OpenAI answers of
 * openai-upstream.ts (and the media and audio routes beside it).
 *
 * Paths, both URL styles:
 * - `POST /openai/deployments/{deployment}/{operation}?api-version=…`
 *   (chat/completions, embeddings, images/generations, images/edits,
 *   audio/speech, audio/transcriptions, audio/translations) and
 *   `POST /openai/responses?api-version=…` (2025-03-01-preview or later) with
 *   the deployment as `model`;
 * - `POST /openai/v1/{operation}` with the deployment as `model`
 *   (`api-version` absent, or `preview`).
 * A missing api-version is Azure's 404 "Resource not found", an unknown one
 * its 400; an unknown deployment `DeploymentNotFound`.
 *
 * Authentication: `api-key: <expectedApiKey>` or `Authorization: Bearer
 * <expectedEntraToken>`; anything else Azure's 401 (consumes no script step).
 *
 * Answers (as the OpenAI server's, `model` the deployment's underlying model):
 * - every chat answer carries `prompt_filter_results` and per-choice
 *   `content_filter_results`; a stream starts with Azure's leading chunk
 *   (no choices, empty id and model, the prompt's verdicts);
 * - a prompt containing {@link AZURE_BLOCKED_PROMPT} is refused with Azure's
 *   400 `content_filter` body (chat, Responses, image generation);
 * - a chat prompt containing {@link AZURE_FILTERED_OUTPUT} has its echo cut
 *   where the marker would be written, with `finish_reason: content_filter`
 *   and the violence verdict filtered.
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter
 */
import { createOpenAIMediaRoutes } from './openai-media-upstream.js';
import { OPENAI_AUDIO_ROUTES } from './openai-audio-upstream.js';
import { createOpenAIDialect } from './openai-upstream.js';
import {
  collectPromptText,
  dataFrame,
  isRecord,
  startUpstreamServer,
  type RecordedRequest,
  type StatusStep,
  type UpstreamAnswer,
  type UpstreamDialect,
  type UpstreamErrorDetails,
  type UpstreamServer,
  type UpstreamServerOptions,
} from './upstream-server.js';

/** A prompt holding this is refused by the fake's content filter. */
export const AZURE_BLOCKED_PROMPT = 'azure-blocked-prompt';
/** A chat completion that would write this is cut there by the fake's content filter. */
export const AZURE_FILTERED_OUTPUT = 'azure-filtered-output';

/** Deployment → the model behind it. */
export const AZURE_DEPLOYMENTS: Readonly<Record<string, string>> = {
  'gpt-4o-prod': 'gpt-4o-2024-11-20',
  'embedding-prod': 'text-embedding-3-small',
  'image-prod': 'gpt-image-1',
  'tts-prod': 'gpt-4o-mini-tts',
  'whisper-prod': 'whisper',
};

export const AZURE_API_VERSIONS = ['2024-10-21', '2025-04-01-preview'];

export interface AzureUpstreamOptions extends Omit<UpstreamServerOptions, 'routes' | 'models'> {
  /** `expectedApiKey` is the `api-key` header; this the Entra ID bearer token accepted as well. */
  expectedEntraToken?: string;
  deployments?: Readonly<Record<string, string>>;
  apiVersions?: readonly string[];
}

export interface AzureUpstreamServer extends UpstreamServer {
  /** The resource endpoint (deployment URLs): `http://127.0.0.1:PORT`. */
  readonly endpoint: string;
  /** The v1 API base: `http://127.0.0.1:PORT/openai/v1`. */
  readonly v1Base: string;
}

export async function startAzureUpstream(options: AzureUpstreamOptions = {}): Promise<AzureUpstreamServer> {
  const server = await startUpstreamServer(createAzureDialect(options), options);
  return Object.assign(server, { endpoint: server.origin, v1Base: `${server.origin}/openai/v1` });
}

/** Azure's `{error:{code,message}}`: `code` a status text or a name, `type` absent. */
export function toAzureErrorBody(status: number, details: UpstreamErrorDetails = {}): unknown {
  return { error: { code: details.code ?? String(status), message: details.message ?? `Upstream test server answered ${status}.` } };
}

/** Azure's token rate limit: 429, `retry-after` in seconds, its message. */
export function azureRateLimitStep(retryAfterSeconds = 1, path?: string): StatusStep {
  return {
    kind: 'status',
    status: 429,
    ...(path ? { path } : {}),
    headers: { 'retry-after': String(retryAfterSeconds), 'x-ratelimit-remaining-tokens': '0' },
    body: toAzureErrorBody(429, {
      message: `Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after ${retryAfterSeconds} seconds.`,
    }),
  };
}

const SAFE = { filtered: false, severity: 'safe' };
const SAFE_VERDICTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const FILTERED_VERDICTS = { ...SAFE_VERDICTS, violence: { filtered: true, severity: 'medium' } };
const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: { ...SAFE_VERDICTS, jailbreak: { filtered: false, detected: false } } }];

function json(status: number, body: unknown): UpstreamAnswer {
  return { kind: 'json', status, body };
}

function promptFilterError(): UpstreamAnswer {
  return json(400, {
    error: {
      message:
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: https://go.microsoft.com/fwlink/?linkid=2198766",
      type: null,
      param: 'prompt',
      code: 'content_filter',
      status: 400,
      innererror: {
        code: 'ResponsibleAIPolicyViolation',
        content_filter_result: { ...SAFE_VERDICTS, jailbreak: { filtered: true, detected: true }, violence: { filtered: true, severity: 'high' } },
      },
    },
  });
}

/** A text field of a recorded multipart body (the model of an edit or a transcription). */
function formText(request: RecordedRequest, field: string): string | undefined {
  return new RegExp(`name="${field}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(request.rawBytes.toString('latin1'))?.[1];
}

type Target = { operation: string; deployment: string } | { error: UpstreamAnswer };

function createAzureDialect(options: AzureUpstreamOptions): UpstreamDialect {
  const deployments = options.deployments ?? AZURE_DEPLOYMENTS;
  const apiVersions = options.apiVersions ?? AZURE_API_VERSIONS;
  const openai = createOpenAIDialect({ ...options, models: Object.values(deployments) });
  const routes = { ...createOpenAIMediaRoutes('azure'), ...OPENAI_AUDIO_ROUTES };
  const notFound = json(404, toAzureErrorBody(404, { message: 'Resource not found' }));

  function deploymentInBody(request: RecordedRequest): string {
    if (isRecord(request.body) && typeof request.body.model === 'string') return request.body.model;
    return formText(request, 'model') ?? '';
  }

  function target(request: RecordedRequest): Target {
    const version = request.query['api-version'];
    const scoped = /^\/openai\/deployments\/([^/]+)(\/.+)$/.exec(request.path);
    let found: { operation: string; deployment: string };
    if (scoped || request.path === '/openai/responses') {
      if (version === undefined) return { error: notFound };
      if (!apiVersions.includes(version)) return { error: json(400, toAzureErrorBody(400, { code: 'BadRequest', message: 'API version not supported' })) };
      // The Responses API came with 2025-03-01-preview: older versions do not know the path.
      if (!scoped && !(version.endsWith('-preview') && version >= '2025-03-01')) return { error: notFound };
      found = scoped ? { deployment: decodeURIComponent(scoped[1]!), operation: scoped[2]! } : { deployment: deploymentInBody(request), operation: '/responses' };
    } else if (request.path.startsWith('/openai/v1/')) {
      if (version !== undefined && version !== 'preview') return { error: json(400, toAzureErrorBody(400, { code: 'BadRequest', message: 'API version not supported' })) };
      found = { deployment: deploymentInBody(request), operation: request.path.slice('/openai/v1'.length) };
    } else {
      return { error: notFound };
    }
    if (!(found.deployment in deployments)) {
      return {
        error: json(404, toAzureErrorBody(404, {
          code: 'DeploymentNotFound',
          message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
        })),
      };
    }
    return found;
  }

  /** The OpenAI answer to the same request, `model` the deployment's model. */
  function openAIAnswer(request: RecordedRequest, operation: string, deployment: string, extra: Record<string, unknown>): UpstreamAnswer {
    const body = isRecord(request.body) ? { ...request.body, model: deployments[deployment], ...extra } : request.body;
    const translated: RecordedRequest = { ...request, path: `/v1${operation}`, body };
    const route = routes[`${request.method} /v1${operation}`];
    return route ? route(translated) : openai.answer(translated);
  }

  function answerChat(request: RecordedRequest, deployment: string): UpstreamAnswer {
    const body = isRecord(request.body) ? request.body : {};
    const filtered = collectPromptText(body.messages ?? []).includes(AZURE_FILTERED_OUTPUT);
    const stops = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
    const answer = openAIAnswer(request, '/chat/completions', deployment, filtered ? { stop: [...stops, AZURE_FILTERED_OUTPUT] } : {});
    /**
     * A choice with its verdicts: filtered on the filter's finish, empty on
     * another finish chunk of a stream (`streamFinish`), safe otherwise.
     */
    const annotate = (choice: unknown, streamed: boolean): unknown => {
      if (!isRecord(choice)) return choice;
      const finish = filtered && choice.finish_reason === 'stop' ? 'content_filter' : choice.finish_reason;
      const verdicts = finish === 'content_filter' ? FILTERED_VERDICTS : streamed && finish ? {} : SAFE_VERDICTS;
      return { ...choice, finish_reason: finish, content_filter_results: verdicts };
    };
    if (answer.kind === 'json' && answer.status === 200 && isRecord(answer.body) && Array.isArray(answer.body.choices)) {
      const choices = answer.body.choices.map((choice) => annotate(choice, false));
      return { ...answer, body: { ...answer.body, choices, prompt_filter_results: PROMPT_FILTER_RESULTS } };
    }
    if (answer.kind !== 'sse') return answer;
    // Azure's leading chunk: the prompt's verdicts, before any choice.
    const frames: Array<string | Buffer> = [dataFrame({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS })];
    for (const frame of answer.frames) {
      // Azure speaks text frames; a binary frame (another dialect's) passes as it is.
      if (typeof frame !== 'string') {
        frames.push(frame);
        continue;
      }
      const data = frame.startsWith('data: ') ? frame.slice(6).trim() : '';
      const chunk = data.startsWith('{') ? (JSON.parse(data) as unknown) : undefined;
      if (!isRecord(chunk) || !Array.isArray(chunk.choices) || chunk.choices.length === 0) {
        frames.push(frame);
        continue;
      }
      frames.push(dataFrame({ ...chunk, choices: chunk.choices.map((choice) => annotate(choice, true)) }));
    }
    return { ...answer, frames };
  }

  return {
    requestIdHeader: 'apim-request-id',
    check(request) {
      if (options.expectedApiKey === undefined && options.expectedEntraToken === undefined) return undefined;
      if (options.expectedApiKey !== undefined && request.headers['api-key'] === options.expectedApiKey) return undefined;
      if (options.expectedEntraToken !== undefined && request.headers.authorization === `Bearer ${options.expectedEntraToken}`) return undefined;
      return json(401, toAzureErrorBody(401, {
        message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      }));
    },
    answer(request) {
      if (request.method !== 'POST') return notFound;
      const found = target(request);
      if ('error' in found) return found.error;
      const { operation, deployment } = found;
      const checksPrompt = operation === '/chat/completions' || operation === '/responses' || operation === '/images/generations';
      if (checksPrompt && collectPromptText(request.body ?? '').includes(AZURE_BLOCKED_PROMPT)) return promptFilterError();
      if (operation === '/chat/completions') return answerChat(request, deployment);
      return openAIAnswer(request, operation, deployment, {});
    },
    errorBody(status, details) {
      return toAzureErrorBody(status, details);
    },
    errorEventFrame(request, details, frameIndex) {
      return openai.errorEventFrame({ ...request, path: request.path.endsWith('/responses') ? '/v1/responses' : '/v1/chat/completions' }, details, frameIndex);
    },
    malformedSseFrame(request) {
      return openai.malformedSseFrame({ ...request, path: request.path.endsWith('/responses') ? '/v1/responses' : '/v1/chat/completions' });
    },
  };
}

/**
 * Amazon Bedrock dialect of the upstream test server: `POST
 * /model/{modelId}/converse` (JSON) and `/converse-stream` (the binary
 * `application/vnd.amazon.eventstream` framing, real frames with CRCs).
 *
 * Every request must be signed with AWS Signature V4 for the server's
 * credentials, region and the `bedrock` service: the server recomputes the
 * signature over what it received (signed headers, path, body) with Smithy's
 * signer and refuses a mismatch with 403 `InvalidSignatureException`, an
 * unknown key with `UnrecognizedClientException`, as Bedrock does.
 *
 * Default answers are derived from the request only:
 * - text: `Echo: <last user text>`, the last user turn's text blocks and
 *   tool result texts joined with a space; `inferenceConfig.stopSequences`
 *   cut it (`stop_sequence`, and the sequence in `additionalModelResponseFields`
 *   when `/stop_sequence` is asked for, as Claude does), `inferenceConfig.maxTokens`
 *   truncates it (`max_tokens`).
 * - a `toolUse` block instead when `toolConfig.toolChoice` is `{any:{}}` or
 *   `{tool:{name}}`: the named (else the first) tool, input
 *   `options.toolArguments` or `{"input":"<last user text>"}`.
 * - usage: `inputTokens` = estimateTokens(all string values of system,
 *   messages and toolConfig), `outputTokens` = estimateTokens(answer text,
 *   or tool name + JSON input); `options.cacheUsage` adds cache reads and writes.
 * Errors: `{"message": …}` with the type in `x-amzn-errortype` (see
 * {@link bedrockErrorStep}); an in-band fault is an `exception` message.
 */
import { createHash } from 'node:crypto';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, Hash, toUtf8 } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import {
  applyStopSequences,
  collectPromptText,
  estimateTokens,
  isRecord,
  splitText,
  startUpstreamServer,
  truncateToTokens,
  type RecordedRequest,
  type StatusStep,
  type UpstreamAnswer,
  type UpstreamDialect,
  type UpstreamServer,
  type UpstreamServerOptions,
} from './upstream-server.js';

export interface BedrockUpstreamOptions extends UpstreamServerOptions {
  region?: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** When set, requests must carry it as `x-amz-security-token` (and sign it). */
  sessionToken?: string;
  /** Cache reads and writes every default answer reports (beside the uncached `inputTokens`). */
  cacheUsage?: { read: number; write: number };
}

/** Credentials the Bedrock suites configure on both sides. */
export const BEDROCK_TEST_CREDENTIALS = {
  accessKeyId: 'AKIAFAKEBEDROCK00001',
  secretAccessKey: 'fake-bedrock-secret-key-0123456789abcdefABCD',
  sessionToken: 'fake-bedrock-session-token-FwoGZXIvYXdzEJr0123456789',
} as const;

export const EVENTSTREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function stringHeader(value: string): { type: 'string'; value: string } {
  return { type: 'string', value };
}

/** One ConverseStream event as Bedrock frames it (with the `p` padding field Bedrock adds to payloads). */
export function bedrockEventFrame(eventType: string, payload: Record<string, unknown>): Buffer {
  const body = fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijklmnop'.slice(0, 1 + (eventType.length % 16)) }));
  const headers = { ':event-type': stringHeader(eventType), ':content-type': stringHeader('application/json'), ':message-type': stringHeader('event') };
  return Buffer.from(codec.encode({ headers, body }));
}

/** An exception inside the stream (`throttlingException`, `internalServerException`…). */
export function bedrockExceptionFrame(exceptionType: string, message: string): Buffer {
  const headers = { ':exception-type': stringHeader(exceptionType), ':content-type': stringHeader('application/json'), ':message-type': stringHeader('exception') };
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify({ message })) }));
}

/** A scripted Bedrock error answer: status, `x-amzn-errortype` and `{"message"}` as Bedrock sends them. */
export function bedrockErrorStep(status: number, type: string, message: string, path?: string): StatusStep {
  return {
    kind: 'status',
    status,
    body: { message },
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
    ...(path === undefined ? {} : { path }),
  };
}

export function startBedrockUpstream(options: BedrockUpstreamOptions): Promise<UpstreamServer> {
  return startUpstreamServer(createBedrockDialect(options), options);
}

type Plan =
  | { kind: 'text'; text: string; stopReason: 'end_turn' | 'stop_sequence' | 'max_tokens'; stopSequence?: string }
  | { kind: 'tool'; name: string; input: Record<string, unknown> };

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;

/** `20260101T120000Z` → Date. */
function parseAmzDate(value: string | undefined): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value ?? '');
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number) as number[];
  return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
}

function createBedrockDialect(options: BedrockUpstreamOptions): UpstreamDialect {
  const region = options.region ?? 'us-east-1';
  const chunkSize = options.streamChunkSize ?? 4;
  const credentials = {
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
  };
  const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });

  const error = (status: number, type: string, message: string): UpstreamAnswer => ({
    kind: 'json',
    status,
    body: { message },
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  });

  async function verifySignature(request: RecordedRequest): Promise<UpstreamAnswer | undefined> {
    const match = AUTHORIZATION.exec(request.headers.authorization ?? '');
    if (!match) return error(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    const [, keyId, , scopeRegion, service, signedHeaderList, signature] = match;
    if (keyId !== options.accessKeyId) return error(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    if (scopeRegion !== region || service !== 'bedrock') return error(403, 'InvalidSignatureException', `Credential should be scoped to a valid region and service (${region}/bedrock).`);
    if (options.sessionToken !== undefined && request.headers['x-amz-security-token'] !== options.sessionToken) {
      return error(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    }
    const signingDate = parseAmzDate(request.headers['x-amz-date']);
    if (!signingDate || Math.abs(Date.now() - signingDate.getTime()) > 15 * 60_000) return error(403, 'InvalidSignatureException', 'Signature expired.');
    // The signer takes a declared payload hash as given: the body must match it, as AWS checks.
    const declaredHash = request.headers['x-amz-content-sha256'];
    if (declaredHash !== undefined && declaredHash !== createHash('sha256').update(request.rawBytes).digest('hex')) {
      return error(400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.');
    }
    const names = signedHeaderList!.split(';');
    if (!names.includes('host') || !names.includes('x-amz-date')) return error(403, 'InvalidSignatureException', 'host and x-amz-date must be signed.');
    const headers: Record<string, string> = {};
    for (const name of names) {
      const value = request.headers[name];
      if (value === undefined) return error(403, 'InvalidSignatureException', `Signed header ${name} is missing.`);
      headers[name] = value;
    }
    const [hostname, port] = headers.host!.split(':');
    const expected = await signer.sign(
      { method: request.method, protocol: 'http:', hostname: hostname!, port: port ? Number(port) : undefined, path: request.path, query: request.query, headers, body: request.rawBytes },
      { signingDate },
    );
    const expectedSignature = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
    if (expectedSignature !== signature) {
      return error(403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided.');
    }
    return undefined;
  }

  function plan(body: Record<string, unknown>): Plan {
    const lastText = lastUserText(body.messages as unknown[]);
    const toolConfig = isRecord(body.toolConfig) ? body.toolConfig : {};
    const tools = Array.isArray(toolConfig.tools) ? toolConfig.tools : [];
    const choice = isRecord(toolConfig.toolChoice) ? toolConfig.toolChoice : undefined;
    const forced = isRecord(choice?.tool) && typeof choice.tool.name === 'string' ? choice.tool.name : undefined;
    if (tools.length > 0 && (isRecord(choice?.any) || forced !== undefined)) {
      const first = tools[0];
      const name = forced ?? (isRecord(first) && isRecord(first.toolSpec) && typeof first.toolSpec.name === 'string' ? first.toolSpec.name : 'tool');
      return { kind: 'tool', name, input: options.toolArguments ?? { input: lastText } };
    }
    const inference = isRecord(body.inferenceConfig) ? body.inferenceConfig : {};
    const stops = Array.isArray(inference.stopSequences) ? inference.stopSequences.filter((stop): stop is string => typeof stop === 'string') : [];
    const stopped = applyStopSequences(`Echo: ${lastText}`, stops);
    const maxTokens = typeof inference.maxTokens === 'number' ? inference.maxTokens : undefined;
    if (maxTokens !== undefined && estimateTokens(stopped.text) > maxTokens) {
      return { kind: 'text', text: truncateToTokens(stopped.text, maxTokens), stopReason: 'max_tokens' };
    }
    return stopped.matched === undefined ? { kind: 'text', text: stopped.text, stopReason: 'end_turn' } : { kind: 'text', text: stopped.text, stopReason: 'stop_sequence', stopSequence: stopped.matched };
  }

  function answerConverse(request: RecordedRequest, stream: boolean): UpstreamAnswer {
    const body = request.body;
    if (!isRecord(body) || !Array.isArray(body.messages) || body.messages.length === 0) {
      return error(400, 'ValidationException', 'The messages field is required and must not be empty.');
    }
    const answer = plan(body);
    const toolUseId = `tooluse_${request.sequence}`;
    const toolJson = answer.kind === 'tool' ? JSON.stringify(answer.input) : '';
    const inputTokens = estimateTokens(collectPromptText([body.system ?? [], body.messages, body.toolConfig ?? {}]));
    const outputTokens = answer.kind === 'text' ? estimateTokens(answer.text) : estimateTokens(answer.name + toolJson);
    const cache = options.cacheUsage;
    const usage: Record<string, number> = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens + (cache ? cache.read + cache.write : 0) };
    if (cache) {
      usage.cacheReadInputTokens = cache.read;
      usage.cacheWriteInputTokens = cache.write;
    }
    const stopReason = answer.kind === 'tool' ? 'tool_use' : answer.stopReason;
    // A model's own response fields, when asked for by path (Claude's `stop_sequence`).
    const paths = Array.isArray(body.additionalModelResponseFieldPaths) ? body.additionalModelResponseFieldPaths : [];
    const responseFields = paths.includes('/stop_sequence') ? { additionalModelResponseFields: { stop_sequence: answer.kind === 'text' ? (answer.stopSequence ?? null) : null } } : {};
    if (!stream) {
      const block = answer.kind === 'tool' ? { toolUse: { toolUseId, name: answer.name, input: answer.input } } : { text: answer.text };
      return {
        kind: 'json',
        status: 200,
        body: { output: { message: { role: 'assistant', content: [block] } }, stopReason, ...responseFields, usage, metrics: { latencyMs: 42 } },
      };
    }
    const frames: Buffer[] = [bedrockEventFrame('messageStart', { role: 'assistant' })];
    if (answer.kind === 'text') {
      for (const piece of splitText(answer.text, chunkSize)) frames.push(bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }));
    } else {
      frames.push(bedrockEventFrame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId, name: answer.name } } }));
      for (const piece of splitText(toolJson, chunkSize)) frames.push(bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } }));
    }
    frames.push(bedrockEventFrame('contentBlockStop', { contentBlockIndex: 0 }));
    frames.push(bedrockEventFrame('messageStop', { stopReason, ...responseFields }));
    frames.push(bedrockEventFrame('metadata', { usage, metrics: { latencyMs: 42 } }));
    return { kind: 'sse', frames, headers: { 'content-type': EVENTSTREAM_CONTENT_TYPE } };
  }

  return {
    requestIdHeader: 'x-amzn-requestid',
    check: verifySignature,
    answer(request) {
      const match = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(request.path);
      if (request.method !== 'POST' || !match) return error(404, 'UnknownOperationException', 'Unknown operation');
      return answerConverse(request, match[2] === 'converse-stream');
    },
    errorBody(_status, details) {
      return { message: details.message ?? 'Upstream test server error' };
    },
    errorEventFrame(_request, details) {
      return bedrockExceptionFrame(details.errorType ?? 'internalServerException', details.message ?? 'Upstream test server error');
    },
    malformedSseFrame() {
      // A frame whose message checksum is wrong.
      const frame = bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'x' } });
      frame[frame.length - 1] = frame[frame.length - 1]! ^ 0xff;
      return frame;
    },
  };
}

/** Text of the last user turn: its text blocks and tool result texts joined with a space. */
function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && message.role === 'user' && Array.isArray(message.content)) {
      const texts: string[] = [];
      for (const block of message.content) {
        if (!isRecord(block)) continue;
        if (typeof block.text === 'string') texts.push(block.text);
        if (isRecord(block.toolResult) && Array.isArray(block.toolResult.content)) {
          for (const item of block.toolResult.content) if (isRecord(item) && typeof item.text === 'string') texts.push(item.text);
        }
      }
      return texts.join(' ');
    }
  }
  return '';
}

/**
 * Bedrock error answers (and exceptions inside a ConverseStream) →
 * UpstreamError. Bedrock names the error in `x-amzn-errortype` (or the
 * body's `__type`), with the message in the body; the type decides the
 * status we keep and whether another attempt may succeed.
 *
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_Errors
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html
 */
import { UpstreamError } from '../../errors.js';
import { bedrockErrorWireSchema } from './bedrock.wire.js';

export const BEDROCK_PROVIDER = 'bedrock';

interface ErrorMapping {
  status: number;
  retryable: boolean;
}

/**
 * Error type → the status the gateway keeps and whether retrying (or another
 * deployment) may help. Quota refusals read as 429 so that a deployment of
 * another account or kind is tried; a model that failed (ModelErrorException,
 * a 424 at Bedrock) reads as a provider failure, not as the client's fault.
 * The credential refusals all read as 401/403: the gateway's own credential,
 * never the client's (errors.ts renders them as UPSTREAM_ERROR).
 */
const ERROR_TYPES: Record<string, ErrorMapping> = {
  ThrottlingException: { status: 429, retryable: true },
  ServiceQuotaExceededException: { status: 429, retryable: false },
  ModelNotReadyException: { status: 429, retryable: true },
  TooManyRequestsException: { status: 429, retryable: true },
  ValidationException: { status: 400, retryable: false },
  SerializationException: { status: 400, retryable: false },
  ResourceNotFoundException: { status: 404, retryable: false },
  ModelTimeoutException: { status: 408, retryable: true },
  ModelErrorException: { status: 502, retryable: false },
  ModelStreamErrorException: { status: 502, retryable: false },
  InternalServerException: { status: 500, retryable: true },
  InternalFailure: { status: 500, retryable: true },
  ServiceUnavailableException: { status: 503, retryable: true },
  ServiceUnavailable: { status: 503, retryable: true },
  AccessDeniedException: { status: 403, retryable: false },
  UnrecognizedClientException: { status: 401, retryable: false },
  InvalidSignatureException: { status: 401, retryable: false },
  IncompleteSignatureException: { status: 401, retryable: false },
  MissingAuthenticationTokenException: { status: 401, retryable: false },
  ExpiredTokenException: { status: 401, retryable: false },
  InvalidClientTokenId: { status: 401, retryable: false },
};

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined) return value;
  }
  return undefined;
}

/**
 * The bare type name: `ThrottlingException:http://internal.amazon.com/…`
 * and `com.amazon.coral.service#ThrottlingException` both read as
 * `ThrottlingException`; stream exceptions come in camelCase
 * (`throttlingException`).
 */
export function normalizeBedrockErrorType(raw: string | null | undefined): string | undefined {
  if (!raw) return undefined;
  let type = raw.split(':')[0]!;
  type = type.slice(type.lastIndexOf('#') + 1).trim();
  if (type === '') return undefined;
  return type[0]!.toUpperCase() + type.slice(1);
}

/** The mapping of a type, else one from the status (429 and 5xx retryable, as the AWS SDKs do). */
function mappingOf(type: string | undefined, status: number): ErrorMapping {
  const known = type === undefined ? undefined : ERROR_TYPES[type];
  if (known) return known;
  return { status, retryable: status === 429 || status >= 500 };
}

/** Signatures never reach a message, should a proxy quote the request's `authorization`. */
export function redactSignatures(text: string): string {
  return text.replace(/Signature=[0-9a-fA-F]{16,}/g, 'Signature=[redacted]');
}

export function parseBedrockError(status: number, bodyText: string, headers: Record<string, string | undefined>): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const parsed = bedrockErrorWireSchema.safeParse(body);
  const type = normalizeBedrockErrorType(header(headers, 'x-amzn-errortype') ?? (parsed.success ? parsed.data.__type : undefined));
  const mapping = mappingOf(type, status);
  const providerMessage = parsed.success ? (parsed.data.message ?? parsed.data.Message) : undefined;
  const message = providerMessage ? redactSignatures(providerMessage) : `Bedrock answered HTTP ${status}${type ? ` (${type})` : ''}.`;
  return new UpstreamError(message, {
    status: mapping.status,
    provider: BEDROCK_PROVIDER,
    upstreamRequestId: header(headers, 'x-amzn-requestid') ?? null,
    retryable: mapping.retryable,
    upstreamType: type ?? null,
  });
}

/**
 * An exception message inside a ConverseStream (`:message-type: exception`,
 * `:exception-type: throttlingException`, payload `{"message": …}`) as the
 * error it would have been as an HTTP answer.
 */
export function fromBedrockStreamException(exceptionType: string | undefined, message: string | undefined, requestId?: string): UpstreamError {
  const type = normalizeBedrockErrorType(exceptionType);
  const mapping = mappingOf(type, 502);
  return new UpstreamError(message ? redactSignatures(message) : `Bedrock reported ${type ?? 'an error'} during the stream.`, {
    status: mapping.status,
    provider: BEDROCK_PROVIDER,
    upstreamRequestId: requestId ?? null,
    retryable: mapping.retryable,
    upstreamType: type ?? null,
  });
}

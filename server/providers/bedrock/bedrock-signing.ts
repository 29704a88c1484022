/**
 * AWS Signature V4 for Bedrock requests, by Smithy's signer (the one the AWS
 * SDKs use). The request is signed when it is about to be sent, so that its
 * `x-amz-date` is fresh; the transport's retries resend it within the
 * signature's validity (AWS accepts 15 minutes of skew).
 *
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html
 */
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/core/serde';
import { UpstreamError } from '../../errors.js';
import type { AwsConnection, ProviderConnection } from '../types.js';

/** The SigV4 service name of the Bedrock runtime endpoints. */
export const BEDROCK_SIGNING_SERVICE = 'bedrock';

/** The public endpoint of a region. */
export function bedrockEndpoint(region: string): string {
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

const sha256 = Hash.bind(null, 'sha256');

/** One signer per connection (a catalog reload makes new connections); the signer caches its signing keys. */
const signers = new WeakMap<AwsConnection, SignatureV4>();

function signerOf(providerId: string, aws: AwsConnection | undefined): SignatureV4 {
  if (!aws?.accessKeyId || !aws.secretAccessKey) {
    throw new UpstreamError('The Bedrock provider has no AWS credentials (check its env: references).', {
      status: 401,
      provider: providerId,
      retryable: false,
    });
  }
  let signer = signers.get(aws);
  if (!signer) {
    const credentials = { accessKeyId: aws.accessKeyId, secretAccessKey: aws.secretAccessKey, ...(aws.sessionToken ? { sessionToken: aws.sessionToken } : {}) };
    signer = new SignatureV4({ service: BEDROCK_SIGNING_SERVICE, region: aws.region, credentials, sha256 });
    signers.set(aws, signer);
  }
  return signer;
}

/** A signed request's headers, and the signature itself (kept out of error messages). */
export interface SignedHeaders {
  headers: Record<string, string>;
  signature: string;
}

/**
 * Signs `POST url` with this JSON body: answers the headers to send
 * (`host`, `content-type`, `accept`, `x-amz-date`, `x-amz-security-token`
 * with a session token, `authorization`). Headers added later (trace
 * context) are not signed, which SigV4 allows.
 */
export async function signBedrockRequest(
  connection: ProviderConnection,
  url: string,
  body: string,
  accept: string,
  signingDate?: Date,
): Promise<SignedHeaders> {
  const signer = signerOf(connection.id, connection.aws);
  const target = new URL(url);
  const headers: Record<string, string> = { host: target.host, 'content-type': 'application/json', accept };
  for (const [name, value] of Object.entries(connection.headers ?? {})) headers[name.toLowerCase()] = value;
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port === '' ? undefined : Number(target.port),
      path: target.pathname,
      query: Object.fromEntries(target.searchParams.entries()),
      headers,
      body,
    },
    signingDate ? { signingDate } : undefined,
  );
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) out[name.toLowerCase()] = String(value);
  const signature = /Signature=([0-9a-f]+)/.exec(out.authorization ?? '')?.[1] ?? '';
  return { headers: out, signature };
}

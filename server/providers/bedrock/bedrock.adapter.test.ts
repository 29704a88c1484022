import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../errors.js';
import type { ProviderConnection } from '../types.js';
import { bedrockUrl, buildBedrockRequest } from './bedrock.adapter.js';
import { parseBedrockError } from './bedrock-errors.js';
import { bedrockEndpoint, signBedrockRequest } from './bedrock-signing.js';

const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const connection: ProviderConnection = {
  id: 'bedrock-east',
  kind: 'bedrock',
  baseUrl: bedrockEndpoint('us-east-1'),
  aws: { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE', secretAccessKey: SECRET, sessionToken: 'session-token-example' },
};

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function hmac(key: string | Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

/** Signature V4 recomputed by hand, step by step as AWS documents it (independent of the signer under test). */
function expectedSignature(headers: Record<string, string>, path: string, body: string): string {
  const names = Object.keys(headers).filter((name) => name !== 'authorization').sort();
  const canonicalRequest = [
    'POST',
    // Each segment is escaped once more: `%3A` becomes `%253A` (every service but S3).
    path.split('/').map((segment) => encodeURIComponent(segment)).join('/'),
    '',
    ...names.map((name) => `${name}:${headers[name]!.trim()}`),
    '',
    names.join(';'),
    sha256Hex(body),
  ].join('\n');
  const date = headers['x-amz-date']!;
  const scope = `${date.slice(0, 8)}/us-east-1/bedrock/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${SECRET}`, date.slice(0, 8));
  for (const part of ['us-east-1', 'bedrock', 'aws4_request']) key = hmac(key, part);
  return hmac(key, stringToSign).toString('hex');
}

describe('requests to Bedrock', () => {
  it('puts the model id in the path as one encoded segment', () => {
    expect(bedrockUrl(connection, 'anthropic.claude-3-haiku-20240307-v1:0', 'converse')).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
    );
    expect(bedrockUrl(connection, 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3', 'converse-stream')).toBe(
      'https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3/converse-stream',
    );
  });

  it('signs with Signature V4 as AWS specifies it, session token included', async () => {
    const url = bedrockUrl(connection, 'anthropic.claude-3-haiku-20240307-v1:0', 'converse');
    const body = '{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}';
    const { headers, signature } = await signBedrockRequest(connection, url, body, 'application/json', new Date(Date.UTC(2026, 0, 2, 3, 4, 5)));
    expect(headers).toMatchObject({
      host: 'bedrock-runtime.us-east-1.amazonaws.com',
      'content-type': 'application/json',
      accept: 'application/json',
      'x-amz-date': '20260102T030405Z',
      'x-amz-security-token': 'session-token-example',
    });
    expect(headers.authorization).toBe(
      `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/us-east-1/bedrock/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=${signature}`,
    );
    expect(signature).toBe(expectedSignature(headers, new URL(url).pathname, body));
  });

  it('refuses to send without credentials, naming none', async () => {
    const missing = { ...connection, aws: { region: 'us-east-1', accessKeyId: 'AKIDEXAMPLE' } };
    await expect(buildBedrockRequest(missing, 'm', '{}', false)).rejects.toThrow(/no AWS credentials/);
  });

  it('keeps the signature out of an error message that quotes it', async () => {
    const built = await buildBedrockRequest(connection, 'm', '{}', false);
    const signature = /Signature=([0-9a-f]+)/.exec(built.request.headers.authorization!)![1]!;
    const error = built.parseError(403, JSON.stringify({ message: `Signature mismatch: got ${signature}, header ${built.request.headers.authorization}` }), {
      'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/',
    });
    expect(error.message).not.toContain(signature);
    expect(error.message).toContain('[redacted]');
    expect(error.status).toBe(401);
  });
});

describe('Bedrock errors', () => {
  const cases: Array<[number, string, number, boolean]> = [
    [429, 'ThrottlingException', 429, true],
    [400, 'ValidationException', 400, false],
    [429, 'ModelNotReadyException', 429, true],
    [503, 'ServiceUnavailableException', 503, true],
    [500, 'InternalServerException', 500, true],
    [408, 'ModelTimeoutException', 408, true],
    [424, 'ModelErrorException', 502, false],
    [403, 'AccessDeniedException', 403, false],
    [403, 'UnrecognizedClientException', 401, false],
    [404, 'ResourceNotFoundException', 404, false],
    [400, 'ServiceQuotaExceededException', 429, false],
  ];
  it.each(cases)('HTTP %i %s → status %i, retryable %s', (status, type, expectedStatus, retryable) => {
    const error = parseBedrockError(status, JSON.stringify({ message: `${type} happened` }), {
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': 'req-42',
    });
    expect(error).toBeInstanceOf(UpstreamError);
    expect({ status: error.status, retryable: error.retryable, type: error.upstreamType, id: error.upstreamRequestId, message: error.message }).toEqual({
      status: expectedStatus,
      retryable,
      type,
      id: 'req-42',
      message: `${type} happened`,
    });
  });

  it('reads the type from the body when the header is missing, and the status otherwise', () => {
    expect(parseBedrockError(400, '{"__type":"com.amazon.coral.validate#ValidationException","Message":"bad"}', {})).toMatchObject({
      status: 400,
      upstreamType: 'ValidationException',
      message: 'bad',
    });
    const unknown = parseBedrockError(502, '<html>Bad Gateway</html>', {});
    expect(unknown).toMatchObject({ status: 502, retryable: true, upstreamType: null });
    expect(unknown.message).toBe('Bedrock answered HTTP 502.');
  });
});

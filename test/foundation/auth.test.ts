/**
 * Authentication through real HTTP (SPEC "Authentication" and "Errors", GAPS.md
 * "Errors" and "Keys"): every authentication code with its exact status and
 * body in both route families, both header forms and their precedence, the IP
 * allowlist over IPv4 and IPv6 loopback, and trusted proxies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson, type Answer } from '../support/http.js';
import {
  CHAT_BODY,
  dataOf,
  expectAnthropicAuthError,
  expectOpenAIAuthError,
  MESSAGES_BODY,
  onHost,
  routeExists,
  trpcMutation,
} from './http.js';

const CHAT = '/v1/chat/completions';
const MESSAGES = '/v1/messages';

let gateway: TestGateway;
/** A second gateway that believes X-Forwarded-For from 127.0.0.1. */
let proxied: TestGateway;

beforeAll(async () => {
  [gateway, proxied] = await Promise.all([startTestGateway(), startTestGateway({ config: { trustedProxies: ['127.0.0.1'] } })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), proxied?.close()]);
});

function chat(baseUrl: string, headers: Record<string, string>): Promise<Answer> {
  return postJson(`${baseUrl}${CHAT}`, CHAT_BODY, headers);
}

function messages(baseUrl: string, headers: Record<string, string>, path = MESSAGES): Promise<Answer> {
  return postJson(`${baseUrl}${path}`, MESSAGES_BODY, headers);
}

/** Authenticated and served: exactly 200 where the route exists (a missing route can only answer 404). */
function expectServed(answer: Answer, method: string, path: string): void {
  if (routeExists(method, path)) expect(answer.status, answer.text).toBe(200);
  else expect(answer.status, `${method} ${path} is not in compat/routes.ts yet: ${answer.text}`).toBe(404);
}

async function adminKeyChange(target: TestGateway, procedure: 'disable' | 'enable' | 'delete', keyId: string): Promise<void> {
  dataOf(await trpcMutation(target.url, `admin.keys.${procedure}`, { key_id: keyId }, target.adminToken));
}

async function setAllowlist(target: TestGateway, accountId: string, ipAllowlist: string[]) {
  return trpcMutation(target.url, 'admin.accounts.setIpAllowlist', { account_id: accountId, ip_allowlist: ipAllowlist }, target.adminToken);
}

describe('authentication errors in the OpenAI shape', () => {
  it('answers 401 MISSING_HEADER without any key header', async () => {
    const answer = await chat(gateway.url, {});
    expectOpenAIAuthError(answer, 401, 'MISSING_HEADER');
  });

  it('treats an empty x-api-key header as missing', async () => {
    const answer = await chat(gateway.url, { 'x-api-key': '' });
    expectOpenAIAuthError(answer, 401, 'MISSING_HEADER');
  });

  it('answers 401 INVALID_FORMAT for "Authorization: Basic x"', async () => {
    const answer = await chat(gateway.url, { authorization: 'Basic x' });
    expectOpenAIAuthError(answer, 401, 'INVALID_FORMAT');
  });

  it('answers 401 INVALID_FORMAT for "Authorization: Bearer" with nothing after it', async () => {
    const answer = await chat(gateway.url, { authorization: 'Bearer' });
    expectOpenAIAuthError(answer, 401, 'INVALID_FORMAT');
    const trailingSpace = await chat(gateway.url, { authorization: 'Bearer   ' });
    expectOpenAIAuthError(trailingSpace, 401, 'INVALID_FORMAT');
  });

  it('answers 401 INVALID_KEY for an unknown key, in either header', async () => {
    const unknown = `sk-umg-${'0'.repeat(48)}`;
    expectOpenAIAuthError(await chat(gateway.url, bearer(unknown)), 401, 'INVALID_KEY');
    expectOpenAIAuthError(await chat(gateway.url, { 'x-api-key': unknown }), 401, 'INVALID_KEY');
    expectOpenAIAuthError(await chat(gateway.url, bearer('not-a-key-at-all')), 401, 'INVALID_KEY');
  });

  it('answers 401 INVALID_KEY for a real key with one character changed', async () => {
    const { key } = await gateway.createAccountWithKey();
    const last = key.at(-1) === 'a' ? 'b' : 'a';
    const wrong = `${key.slice(0, -1)}${last}`;
    expectOpenAIAuthError(await chat(gateway.url, bearer(wrong)), 401, 'INVALID_KEY');
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
  });

  it('answers 401 INVALID_KEY for a disabled key, and serves it again once re-enabled', async () => {
    const { key, keyId } = await gateway.createAccountWithKey();
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
    await adminKeyChange(gateway, 'disable', keyId);
    expectOpenAIAuthError(await chat(gateway.url, bearer(key)), 401, 'INVALID_KEY');
    expectOpenAIAuthError(await chat(gateway.url, { 'x-api-key': key }), 401, 'INVALID_KEY');
    await adminKeyChange(gateway, 'enable', keyId);
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
  });

  it('answers 401 INVALID_KEY for a deleted key', async () => {
    const { key, keyId } = await gateway.createAccountWithKey();
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
    await adminKeyChange(gateway, 'delete', keyId);
    expectOpenAIAuthError(await chat(gateway.url, bearer(key)), 401, 'INVALID_KEY');
  });

  it('answers 403 ACCOUNT_DISABLED for a valid key of a disabled account', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
    dataOf(await trpcMutation(gateway.url, 'admin.accounts.disable', { account_id: accountId }, gateway.adminToken));
    expectOpenAIAuthError(await chat(gateway.url, bearer(key)), 403, 'ACCOUNT_DISABLED');
    expectOpenAIAuthError(await chat(gateway.url, { 'x-api-key': key }), 403, 'ACCOUNT_DISABLED');
  });

  it('answers 403 IP_ACCESS_DENIED for an address outside the allowlist', async () => {
    const { key } = await gateway.createAccountWithKey({ ipAllowlist: ['192.0.2.1'] });
    const error = expectOpenAIAuthError(await chat(gateway.url, bearer(key)), 403, 'IP_ACCESS_DENIED');
    expect(error.message).toContain('127.0.0.1');
  });

  it('uses an incoming x-request-id as the reference_id', async () => {
    const answer = await chat(gateway.url, { 'x-request-id': 'trace-auth-0001' });
    const error = expectOpenAIAuthError(answer, 401, 'MISSING_HEADER');
    expect(answer.headers.get('x-request-id')).toBe('trace-auth-0001');
    expect(error.reference_id).toBe('trace-auth-0001');
  });

  it('gives every answer its own request id', async () => {
    const [first, second] = await Promise.all([chat(gateway.url, {}), chat(gateway.url, {})]);
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
  });
});

describe('the two header forms', () => {
  it('authenticates with "Authorization: Bearer <key>"', async () => {
    const { key } = await gateway.createAccountWithKey();
    expectServed(await chat(gateway.url, bearer(key)), 'POST', CHAT);
  });

  it('authenticates with "x-api-key: <key>"', async () => {
    const { key } = await gateway.createAccountWithKey();
    expectServed(await chat(gateway.url, { 'x-api-key': key }), 'POST', CHAT);
  });

  it('lets Authorization win when both headers are sent (GAPS.md)', async () => {
    const { key } = await gateway.createAccountWithKey();
    const unknown = `sk-umg-${'1'.repeat(48)}`;
    expectServed(await chat(gateway.url, { ...bearer(key), 'x-api-key': unknown }), 'POST', CHAT);
    expectOpenAIAuthError(await chat(gateway.url, { ...bearer(unknown), 'x-api-key': key }), 401, 'INVALID_KEY');
    expectOpenAIAuthError(await chat(gateway.url, { authorization: 'Basic x', 'x-api-key': key }), 401, 'INVALID_FORMAT');
  });
});

describe('authentication errors in the Anthropic shape (messages family)', () => {
  it('answers 401 MISSING_HEADER on /v1/messages and /v1/messages/count_tokens', async () => {
    expectAnthropicAuthError(await messages(gateway.url, {}), 401, 'MISSING_HEADER');
    expectAnthropicAuthError(await messages(gateway.url, {}, '/v1/messages/count_tokens'), 401, 'MISSING_HEADER');
  });

  it('answers 401 INVALID_FORMAT for a malformed Authorization header', async () => {
    expectAnthropicAuthError(await messages(gateway.url, { authorization: 'Basic x' }), 401, 'INVALID_FORMAT');
  });

  it('answers 401 INVALID_KEY for an unknown x-api-key', async () => {
    expectAnthropicAuthError(await messages(gateway.url, { 'x-api-key': `sk-umg-${'2'.repeat(48)}` }), 401, 'INVALID_KEY');
  });

  it('answers 403 ACCOUNT_DISABLED and 403 IP_ACCESS_DENIED', async () => {
    const disabled = await gateway.createAccountWithKey();
    await gateway.disableAccount(disabled.accountId);
    expectAnthropicAuthError(await messages(gateway.url, { 'x-api-key': disabled.key }), 403, 'ACCOUNT_DISABLED');
    const elsewhere = await gateway.createAccountWithKey({ ipAllowlist: ['192.0.2.1'] });
    expectAnthropicAuthError(await messages(gateway.url, { 'x-api-key': elsewhere.key }), 403, 'IP_ACCESS_DENIED');
  });

  it('serves a valid key in either header form', async () => {
    const { key } = await gateway.createAccountWithKey();
    expectServed(await messages(gateway.url, { 'x-api-key': key }), 'POST', MESSAGES);
    expectServed(await messages(gateway.url, bearer(key)), 'POST', MESSAGES);
  });
});

describe('IP allowlist', () => {
  const v4 = () => onHost(gateway.url, '127.0.0.1');
  const v6 = () => onHost(gateway.url, '[::1]');

  it('accepts any address when the allowlist is empty', async () => {
    const { key } = await gateway.createAccountWithKey();
    expectServed(await chat(v4(), bearer(key)), 'POST', CHAT);
    expectServed(await chat(v6(), bearer(key)), 'POST', CHAT);
  });

  it('serves an account allowlisting 127.0.0.1 over 127.0.0.1 and refuses it over ::1', async () => {
    const { key } = await gateway.createAccountWithKey({ ipAllowlist: ['127.0.0.1'] });
    expectServed(await chat(v4(), bearer(key)), 'POST', CHAT);
    const error = expectOpenAIAuthError(await chat(v6(), bearer(key)), 403, 'IP_ACCESS_DENIED');
    expect(error.message).toContain('::1');
  });

  it('serves an account allowlisting ::1 over ::1 and refuses it over 127.0.0.1', async () => {
    const { key } = await gateway.createAccountWithKey({ ipAllowlist: ['::1'] });
    expectServed(await chat(v6(), bearer(key)), 'POST', CHAT);
    expectOpenAIAuthError(await chat(v4(), bearer(key)), 403, 'IP_ACCESS_DENIED');
  });

  it('matches IPv4 CIDR ranges', async () => {
    const hit = await gateway.createAccountWithKey({ ipAllowlist: ['127.0.0.0/8'] });
    expectServed(await chat(v4(), bearer(hit.key)), 'POST', CHAT);
    const miss = await gateway.createAccountWithKey({ ipAllowlist: ['10.0.0.0/8'] });
    expectOpenAIAuthError(await chat(v4(), bearer(miss.key)), 403, 'IP_ACCESS_DENIED');
  });

  it('matches IPv6 CIDR ranges', async () => {
    const hit = await gateway.createAccountWithKey({ ipAllowlist: ['::1/128'] });
    expectServed(await chat(v6(), bearer(hit.key)), 'POST', CHAT);
    const miss = await gateway.createAccountWithKey({ ipAllowlist: ['2001:db8::/32'] });
    expectOpenAIAuthError(await chat(v6(), bearer(miss.key)), 403, 'IP_ACCESS_DENIED');
  });

  it('applies an allowlist changed through the admin API to the next request', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    expectServed(await chat(v4(), bearer(key)), 'POST', CHAT);
    dataOf(await setAllowlist(gateway, accountId, ['10.0.0.0/8']));
    expectOpenAIAuthError(await chat(v4(), bearer(key)), 403, 'IP_ACCESS_DENIED');
    dataOf(await setAllowlist(gateway, accountId, []));
    expectServed(await chat(v4(), bearer(key)), 'POST', CHAT);
  });

  it('honours an IPv4-mapped IPv6 range the admin API accepted (never a 500)', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    const saved = await setAllowlist(gateway, accountId, ['::ffff:127.0.0.0/104']);
    if (saved.error) {
      // Refusing the entry up front is a correct answer too.
      expect(saved.error.data.gatewayCode).toBe('INVALID_REQUEST');
      return;
    }
    // ::ffff:127.0.0.0/104 is 127.0.0.0/8 written in IPv6: the account must be served over 127.0.0.1.
    const answer = await chat(v4(), bearer(key));
    expect(answer.status, answer.text).not.toBe(500);
    expectServed(answer, 'POST', CHAT);
  });

  it('ignores X-Forwarded-For by default, so a spoofed address does not help', async () => {
    const spoofer = await gateway.createAccountWithKey({ ipAllowlist: ['203.0.113.9'] });
    expectOpenAIAuthError(await chat(v4(), { ...bearer(spoofer.key), 'x-forwarded-for': '203.0.113.9' }), 403, 'IP_ACCESS_DENIED');
    const local = await gateway.createAccountWithKey({ ipAllowlist: ['127.0.0.1'] });
    expectServed(await chat(v4(), { ...bearer(local.key), 'x-forwarded-for': '198.51.100.7' }), 'POST', CHAT);
  });
});

describe('trusted proxies', () => {
  const fromProxy = () => onHost(proxied.url, '127.0.0.1');
  const fromElsewhere = () => onHost(proxied.url, '[::1]');

  it('believes X-Forwarded-For from a trusted proxy', async () => {
    const client = await proxied.createAccountWithKey({ ipAllowlist: ['203.0.113.9'] });
    expectServed(await chat(fromProxy(), { ...bearer(client.key), 'x-forwarded-for': '203.0.113.9' }), 'POST', CHAT);
    const proxyOnly = await proxied.createAccountWithKey({ ipAllowlist: ['127.0.0.1'] });
    const error = expectOpenAIAuthError(await chat(fromProxy(), { ...bearer(proxyOnly.key), 'x-forwarded-for': '203.0.113.9' }), 403, 'IP_ACCESS_DENIED');
    expect(error.message).toContain('203.0.113.9');
  });

  it('uses the socket address when a trusted proxy sends no X-Forwarded-For', async () => {
    const proxyOnly = await proxied.createAccountWithKey({ ipAllowlist: ['127.0.0.1'] });
    expectServed(await chat(fromProxy(), bearer(proxyOnly.key)), 'POST', CHAT);
  });

  it('takes the right-most untrusted hop, so a client cannot prepend a spoofed one', async () => {
    const spoofed = await proxied.createAccountWithKey({ ipAllowlist: ['198.51.100.1'] });
    const headers = { ...bearer(spoofed.key), 'x-forwarded-for': '198.51.100.1, 203.0.113.9' };
    expectOpenAIAuthError(await chat(fromProxy(), headers), 403, 'IP_ACCESS_DENIED');
    const real = await proxied.createAccountWithKey({ ipAllowlist: ['203.0.113.9'] });
    expectServed(await chat(fromProxy(), { ...bearer(real.key), 'x-forwarded-for': '198.51.100.1, 203.0.113.9' }), 'POST', CHAT);
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const client = await proxied.createAccountWithKey({ ipAllowlist: ['203.0.113.9'] });
    expectOpenAIAuthError(await chat(fromElsewhere(), { ...bearer(client.key), 'x-forwarded-for': '203.0.113.9' }), 403, 'IP_ACCESS_DENIED');
  });
});

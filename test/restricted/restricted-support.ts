/**
 * Helpers of the restricted-family suites: a catalog with restricted models on the built-in
 * mock and on the OpenAI- and Anthropic-format upstream test servers, one request builder per
 * client format, and readers of what a request left behind (usage rows, balances, reviews).
 */
import { expect } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import type { TestGateway } from '../support/gateway.js';
import { bearer, postJson, type Answer, type Json } from '../support/http.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';

export const OPENAI_SECRET = 'sk-upstream-openai-restricted-SECRET';
export const ANTHROPIC_SECRET = 'sk-ant-upstream-restricted-SECRET';
export const RESTRICTED_ENV = { UMG_RESTRICTED_OPENAI_KEY: OPENAI_SECRET, UMG_RESTRICTED_ANTHROPIC_KEY: ANTHROPIC_SECRET };

/** A family declared in the catalog (the upstream models), beside the legacy `restricted` family (mock-restricted). */
export const DECLARED_FAMILY = 'companion';

const CHAT_ENDPOINTS = ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/responses/compact'] as const;

export function restrictedCatalog(urls: { openai: string; anthropic: string }): CatalogFile {
  const pricing = { input: 3, output: 15 };
  return {
    providers: [
      { id: 'openai-up', kind: 'openai', baseUrl: urls.openai, apiKey: 'env:UMG_RESTRICTED_OPENAI_KEY' },
      { id: 'anthropic-up', kind: 'anthropic', baseUrl: urls.anthropic, apiKey: 'env:UMG_RESTRICTED_ANTHROPIC_KEY' },
      { id: 'mock', kind: 'mock' },
    ],
    families: { [DECLARED_FAMILY]: { restricted: true, description: 'Companion roleplay models' } },
    models: [
      { id: 'mock-chat', ownedBy: 'umg', provider: 'mock', upstreamModel: 'mock-chat', endpoints: [...CHAT_ENDPOINTS], pricing },
      { id: 'mock-restricted', ownedBy: 'umg', provider: 'mock', upstreamModel: 'mock-restricted', endpoints: [...CHAT_ENDPOINTS], pricing, family: 'restricted' },
      {
        id: 'gpt-companion',
        ownedBy: 'e2e',
        provider: 'openai-up',
        upstreamModel: 'gpt-4o-mini',
        endpoints: ['/v1/chat/completions', '/v1/responses', '/v1/responses/compact'],
        pricing,
        family: DECLARED_FAMILY,
      },
      {
        id: 'claude-companion',
        ownedBy: 'e2e',
        provider: 'anthropic-up',
        upstreamModel: 'claude-sonnet-4-5',
        endpoints: ['/v1/messages', '/v1/messages/count_tokens'],
        pricing,
        family: DECLARED_FAMILY,
      },
    ],
  };
}

export type FormatName = 'chat' | 'messages' | 'responses';

export interface Conversation {
  system?: string;
  /** Earlier turns, oldest first, then the last user message. */
  turns?: Array<{ role: 'user' | 'assistant'; text: string }>;
  user: string;
}

/** One client format: its path and how a conversation is written in it. */
export interface Format {
  name: FormatName;
  path: string;
  body(model: string, conversation: Conversation, stream: boolean): Json;
}

export const FORMATS: Format[] = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    body: (model, conversation, stream) => ({
      model,
      stream,
      messages: [
        ...(conversation.system ? [{ role: 'system', content: conversation.system }] : []),
        ...(conversation.turns ?? []).map((turn) => ({ role: turn.role, content: turn.text })),
        { role: 'user', content: conversation.user },
      ],
    }),
  },
  {
    name: 'messages',
    path: '/v1/messages',
    body: (model, conversation, stream) => ({
      model,
      stream,
      max_tokens: 32,
      ...(conversation.system ? { system: conversation.system } : {}),
      messages: [...(conversation.turns ?? []).map((turn) => ({ role: turn.role, content: turn.text })), { role: 'user', content: conversation.user }],
    }),
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: (model, conversation, stream) => ({
      model,
      stream,
      ...(conversation.system ? { instructions: conversation.system } : {}),
      input: [...(conversation.turns ?? []).map((turn) => ({ role: turn.role, content: turn.text })), { role: 'user', content: conversation.user }],
    }),
  },
];

export function send(gateway: TestGateway, key: string, format: Format, model: string, conversation: Conversation, stream: boolean): Promise<Answer> {
  return postJson(`${gateway.url}${format.path}`, format.body(model, conversation, stream), bearer(key));
}

/** The gateway's error code in either error shape (OpenAI, or Anthropic on the messages family). */
export function errorCodeOf(answer: Answer): string | undefined {
  return (answer.body.error as Json | undefined)?.code as string | undefined;
}

/** A refusal in the route's error shape: status, code, and the shape of the format's family. */
export function expectRefused(answer: Answer, format: Pick<Format, 'name'>, code: string): void {
  expect(answer.status, answer.text).toBe(403);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(errorCodeOf(answer)).toBe(code);
  if (format.name === 'messages') {
    expect(answer.body.type).toBe('error');
    expect((answer.body.error as Json).type).toBe('permission_error');
  } else {
    expect(answer.body).not.toHaveProperty('type');
    expect((answer.body.error as Json).message).toBeTypeOf('string');
  }
}

/** A served answer: 200, and for a stream its final frame. */
export function expectServed(answer: Answer, format: Format, stream: boolean): void {
  expect(answer.status, answer.text).toBe(200);
  if (!stream) return;
  expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
  if (format.name === 'chat') expect(answer.text).toContain('data: [DONE]');
  if (format.name === 'messages') expect(answer.text).toContain('event: message_stop');
  if (format.name === 'responses') expect(answer.text).toContain('event: response.completed');
}

/** What an account was charged so far: usage rows written and balances, after a flush. */
export async function chargesOf(gateway: TestGateway, accountId: string): Promise<{ rows: number; current: number; held: number; holds: number }> {
  await flushAll(gateway);
  const balances = await balancesOf(gateway, accountId);
  return { rows: (await usageRowsOf(gateway, accountId)).length, current: balances.current, held: balances.held, holds: balances.holds };
}

/** The review rows of an account, oldest first. */
export function reviewsOf(gateway: TestGateway, accountId: string) {
  return gateway.gateway.services.db.selectFrom('usage_reviews').selectAll().where('account_id', '=', accountId).orderBy('seq').execute();
}

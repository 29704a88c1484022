import type { AppCaller } from '../routers/_app.js';
import type { ErrorFamily } from './error-body.js';

export type StreamFormat = 'chat' | 'messages' | 'responses';

export interface RouteInput {
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
}

/** One public route: where it lives, how its body is read, which procedure serves it, how errors look. */
export interface CompatRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  family: ErrorFamily;
  body: 'json' | 'none';
  /** The SSE dialect of a streamed answer; unset for routes that never stream. */
  streamFormat?: StreamFormat;
  summary: string;
  invoke(caller: AppCaller, input: RouteInput): Promise<unknown>;
}

/** The public REST surface. Every row calls a tRPC procedure through the in-process caller. */
export const ROUTES: CompatRoute[] = [
  {
    method: 'GET',
    path: '/v1/models',
    family: 'openai',
    body: 'none',
    summary: 'List models',
    invoke: (caller) => caller.models.list(),
  },
  {
    method: 'GET',
    path: '/v1/models/:id',
    family: 'openai',
    body: 'none',
    summary: 'Get a model',
    invoke: (caller, input) => caller.models.get({ id: input.params.id! }),
  },
  {
    method: 'POST',
    path: '/v1/chat/completions',
    family: 'openai',
    body: 'json',
    streamFormat: 'chat',
    summary: 'Create a chat completion',
    invoke: (caller, input) => caller.chat.completions(input.body as never),
  },
  {
    method: 'POST',
    path: '/v1/messages',
    family: 'anthropic',
    body: 'json',
    streamFormat: 'messages',
    summary: 'Create a message (Anthropic format)',
    invoke: (caller, input) => caller.messages.create(input.body as never),
  },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    family: 'anthropic',
    body: 'json',
    summary: 'Count input tokens (not billed)',
    invoke: (caller, input) => caller.messages.countTokens(input.body as never),
  },
  {
    method: 'POST',
    path: '/v1/responses',
    family: 'openai',
    body: 'json',
    streamFormat: 'responses',
    summary: 'Create a response (Responses format)',
    invoke: (caller, input) => caller.responses.create(input.body as never),
  },
  {
    method: 'POST',
    path: '/v1/responses/compact',
    family: 'openai',
    body: 'json',
    summary: 'Compact a conversation (billed, never streamed)',
    invoke: (caller, input) => caller.responses.compact(input.body as never),
  },
  {
    method: 'POST',
    path: '/v1/images/generations',
    family: 'openai',
    body: 'json',
    summary: 'Generate images (not on the free plan)',
    invoke: (caller, input) => caller.images.generate(input.body as never),
  },
  {
    method: 'GET',
    path: '/v1/credits',
    family: 'openai',
    body: 'none',
    summary: 'Credit balance',
    invoke: (caller) => caller.account.credits(),
  },
  {
    method: 'GET',
    path: '/v1/discounts/my-discounts',
    family: 'openai',
    body: 'none',
    summary: "Today's discounts",
    invoke: (caller) => caller.account.discounts(),
  },
  {
    method: 'GET',
    path: '/v1/usage',
    family: 'openai',
    body: 'none',
    summary: 'Charged requests, newest first',
    invoke: (caller, input) => caller.account.usage(input.query as never),
  },
];

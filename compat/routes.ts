import type { AppCaller } from '../routers/_app.js';
import { jsonAnswer, type Answer } from '../server/answers.js';
import type { ErrorFamily } from './error-body.js';
import type { MultipartBody, MultipartSpec } from './read-multipart.js';

export interface RouteInput {
  /** The JSON object body (`{}` for routes without one). */
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The form of a multipart route (text fields, and files already on disk). */
  form: MultipartBody;
}

/** One public route: where it lives, what it reads, which procedure serves it, how its errors look. */
export interface CompatRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The error shape of the route (GAPS.md: the messages family answers in Anthropic's). */
  family: ErrorFamily;
  body: 'json' | 'multipart' | 'none';
  /** The files a multipart route accepts, with their bounds. */
  multipart?: MultipartSpec;
  /** `key`: the API key, account and rate limit are checked from the headers before the body is read. */
  auth: 'key' | 'none';
  /** The answer can be server-sent events (by the request's `stream` flag), for the OpenAPI document. */
  streams?: true;
  summary: string;
  invoke(caller: AppCaller, input: RouteInput): Promise<Answer>;
}

/**
 * A request body or query as the procedure's input. The procedure's own zod
 * schema checks it before anything else runs; compat only claims its type,
 * here and nowhere else.
 */
function checkedByProcedure<Input>(value: Record<string, unknown>): Input {
  return value as Input;
}

/** The public REST surface. Every row calls a tRPC procedure through the in-process caller. */
export const ROUTES: CompatRoute[] = [
  {
    method: 'GET',
    path: '/v1/models',
    family: 'openai',
    body: 'none',
    auth: 'none',
    summary: 'List models',
    invoke: async (caller) => jsonAnswer(await caller.models.list()),
  },
  {
    method: 'GET',
    path: '/v1/models/:id',
    family: 'openai',
    body: 'none',
    auth: 'none',
    summary: 'Get a model',
    invoke: async (caller, input) => jsonAnswer(await caller.models.get({ id: input.params.id ?? '' })),
  },
  {
    method: 'POST',
    path: '/v1/chat/completions',
    streams: true,
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Create a chat completion',
    invoke: (caller, input) => caller.chat.completions(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/messages',
    streams: true,
    family: 'anthropic',
    body: 'json',
    auth: 'key',
    summary: 'Create a message (Anthropic format)',
    invoke: (caller, input) => caller.messages.create(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    family: 'anthropic',
    body: 'json',
    auth: 'key',
    summary: 'Count input tokens (not billed)',
    invoke: async (caller, input) => jsonAnswer(await caller.messages.countTokens(checkedByProcedure(input.body))),
  },
  {
    method: 'POST',
    path: '/v1/responses',
    streams: true,
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Create a response (Responses format)',
    invoke: (caller, input) => caller.responses.create(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/responses/compact',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Compact a conversation (billed, never streamed)',
    invoke: (caller, input) => caller.responses.compact(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/images/generations',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Generate images (not on the free plan)',
    invoke: (caller, input) => caller.images.generate(checkedByProcedure(input.body)),
  },
  {
    method: 'GET',
    path: '/v1/credits',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Credit balance',
    invoke: async (caller) => jsonAnswer(await caller.account.credits()),
  },
  {
    method: 'GET',
    path: '/v1/discounts/my-discounts',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: "Today's discounts",
    invoke: async (caller) => jsonAnswer(await caller.account.discounts()),
  },
  {
    method: 'GET',
    path: '/v1/usage',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Charged requests, newest first',
    invoke: async (caller, input) => jsonAnswer(await caller.account.usage(checkedByProcedure(input.query))),
  },
];

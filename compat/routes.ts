import { chatCompletionAnswerDoc, compactionAnswerDoc, messageAnswerDoc, responseAnswerDoc } from './answer-docs.js';
import { jsonAnswer } from '../server/answers.js';
import { checkedByProcedure, type CompatRoute } from './route.js';
import { AUDIO_ROUTES } from './routes/audio.routes.js';
import { VIDEO_ROUTES } from './routes/videos.routes.js';
import { EMBEDDINGS_ROUTES } from './routes/embeddings.routes.js';
import { IMAGES_ROUTES } from './routes/images.routes.js';
import { MODERATIONS_ROUTES } from './routes/moderations.routes.js';

export type { CompatRoute, RouteInput } from './route.js';

/** The chat-family and account routes. */
const CORE_ROUTES: CompatRoute[] = [
  {
    method: 'GET',
    path: '/v1/models',
    family: 'openai',
    body: 'none',
    auth: 'none',
    summary: 'List models',
    procedure: 'models.list',
    invoke: async (caller) => jsonAnswer(await caller.models.list()),
  },
  {
    method: 'GET',
    path: '/v1/models/:id',
    family: 'openai',
    body: 'none',
    auth: 'none',
    summary: 'Get a model',
    procedure: 'models.get',
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
    procedure: 'chat.completions',
    docs: { answer: chatCompletionAnswerDoc },
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
    procedure: 'messages.create',
    docs: { answer: messageAnswerDoc },
    invoke: (caller, input) => caller.messages.create(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/messages/count_tokens',
    family: 'anthropic',
    body: 'json',
    auth: 'key',
    summary: 'Count input tokens (not billed)',
    procedure: 'messages.countTokens',
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
    procedure: 'responses.create',
    docs: { answer: responseAnswerDoc },
    invoke: (caller, input) => caller.responses.create(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/responses/compact',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Compact a conversation (billed, never streamed)',
    procedure: 'responses.compact',
    docs: { answer: compactionAnswerDoc },
    invoke: (caller, input) => caller.responses.compact(checkedByProcedure(input.body)),
  },
  {
    method: 'GET',
    path: '/v1/credits',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Credit balance',
    procedure: 'account.credits',
    invoke: async (caller) => jsonAnswer(await caller.account.credits()),
  },
  {
    method: 'GET',
    path: '/v1/discounts/my-discounts',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: "Today's discounts",
    procedure: 'account.discounts',
    invoke: async (caller) => jsonAnswer(await caller.account.discounts()),
  },
  {
    method: 'GET',
    path: '/v1/usage',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Charged requests, newest first',
    procedure: 'account.usage',
    invoke: async (caller, input) => jsonAnswer(await caller.account.usage(checkedByProcedure(input.query))),
  },
];

/** The public REST surface. Every row calls a tRPC procedure through the in-process caller; each family's rows live in its own file. */
export const ROUTES: CompatRoute[] = [...CORE_ROUTES, ...IMAGES_ROUTES, ...EMBEDDINGS_ROUTES, ...MODERATIONS_ROUTES, ...AUDIO_ROUTES, ...VIDEO_ROUTES];

/**
 * Every operation called as an internal TypeScript client calls it: through
 * `createCaller`, with no HTTP. The output types are checked by the
 * typechecker (`expectTypeOf`, run by `npm run typecheck`), the values at run
 * time: a JSON answer carries its typed body and metadata, a stream yields
 * typed events (parsed from passed-through bytes when read), and JSON
 * procedures are typed the same through the `@trpc/client` HTTP client.
 */
import { createTRPCClient, httpLink } from '@trpc/client';
import type { inferRouterOutputs } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createCaller, type AppCaller, type AppRouter } from '../../routers/_app.js';
import type { ChatCompletionAnswer } from '../../routers/chat/chat.router.js';
import type { MessagesAnswer } from '../../routers/messages/messages.router.js';
import type { ResponsesAnswer } from '../../routers/responses/responses.router.js';
import type { JsonAnswer, StreamPart } from '../../server/answers.js';
import { authorizeRequest } from '../../server/auth/authorize.js';
import { createContextInner } from '../../server/context.js';
import type { ChatStreamEvent } from '../../server/generation/chat.codec.js';
import type { MessagesStreamEvent } from '../../server/generation/messages.codec.js';
import type { ChatCompletion } from '../../server/providers/openai/openai.wire.js';
import type { ImagesResponse } from '../../server/providers/openai/openai-images.wire.js';
import type { ImagesAnswer } from '../../server/images/image-requests.js';
import type { CountTokensResponse, MessagesResponse } from '../../server/providers/anthropic/anthropic.wire.js';
import type { ResponseObject, ResponsesStreamEvent } from '../../server/translate/responses/responses-object.wire.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

type Output<Procedure extends (...args: never[]) => unknown> = Awaited<ReturnType<Procedure>>;

describe('output types for internal callers', () => {
  it('types every generation procedure by its format', () => {
    expectTypeOf<Output<AppCaller['chat']['completions']>>().toEqualTypeOf<ChatCompletionAnswer>();
    expectTypeOf<Extract<ChatCompletionAnswer, { kind: 'json' }>['body']>().toEqualTypeOf<ChatCompletion>();
    expectTypeOf<Extract<ChatCompletionAnswer, { kind: 'stream' }>['parts']>().toEqualTypeOf<AsyncIterable<StreamPart<ChatStreamEvent>>>();
    expectTypeOf<Output<AppCaller['messages']['create']>>().toEqualTypeOf<MessagesAnswer>();
    expectTypeOf<Extract<MessagesAnswer, { kind: 'json' }>['body']>().toEqualTypeOf<MessagesResponse>();
    expectTypeOf<Extract<MessagesAnswer, { kind: 'stream' }>['parts']>().toEqualTypeOf<AsyncIterable<StreamPart<MessagesStreamEvent>>>();
    expectTypeOf<Output<AppCaller['messages']['countTokens']>>().toEqualTypeOf<CountTokensResponse>();
    expectTypeOf<Output<AppCaller['responses']['create']>>().toEqualTypeOf<ResponsesAnswer>();
    expectTypeOf<Extract<ResponsesAnswer, { kind: 'stream' }>['parts']>().toEqualTypeOf<AsyncIterable<StreamPart<ResponsesStreamEvent>>>();
    expectTypeOf<Output<AppCaller['responses']['compact']>>().toEqualTypeOf<JsonAnswer<ResponseObject>>();
    expectTypeOf<Output<AppCaller['images']['generate']>>().toEqualTypeOf<ImagesAnswer>();
    expectTypeOf<Extract<ImagesAnswer, { kind: 'json' }>>().toEqualTypeOf<JsonAnswer<ImagesResponse>>();
    expectTypeOf<Output<AppCaller['embeddings']['create']>['body']['data'][number]['index']>().toEqualTypeOf<number>();
    expectTypeOf<Output<AppCaller['moderations']['create']>['body']['results'][number]['flagged']>().toEqualTypeOf<boolean>();
    expectTypeOf<Output<AppCaller['videos']['get']>['status']>().toEqualTypeOf<'pending' | 'processing' | 'completed' | 'failed'>();
  });

  it('types the JSON procedures alike through createCaller and the HTTP client', () => {
    type HttpOutputs = inferRouterOutputs<AppRouter>;
    expectTypeOf<Output<AppCaller['models']['list']>>().toEqualTypeOf<HttpOutputs['models']['list']>();
    expectTypeOf<Output<AppCaller['models']['get']>>().toEqualTypeOf<HttpOutputs['models']['get']>();
    expectTypeOf<Output<AppCaller['account']['credits']>>().toEqualTypeOf<HttpOutputs['account']['credits']>();
    expectTypeOf<Output<AppCaller['account']['usage']>>().toEqualTypeOf<HttpOutputs['account']['usage']>();
    expectTypeOf<Output<AppCaller['admin']['accounts']['get']>>().toEqualTypeOf<HttpOutputs['admin']['accounts']['get']>();
    expectTypeOf<Output<AppCaller['admin']['keys']['create']>>().toHaveProperty('key').toEqualTypeOf<string>();
    expectTypeOf<Output<AppCaller['models']['list']>['data'][number]['id']>().toEqualTypeOf<string>();
    expectTypeOf<Output<AppCaller['account']['credits']>['current_credits']>().toEqualTypeOf<number>();
  });
});

describe('every operation through createCaller', () => {
  let gateway: TestGateway;
  let caller: AppCaller;
  let admin: AppCaller;

  beforeAll(async () => {
    gateway = await startTestGateway();
    const { key } = await gateway.createAccountWithKey({ credits: 50 });
    const services = gateway.gateway.services;
    const credentials = { kind: 'token' as const, token: key, scheme: 'bearer' as const };
    caller = createCaller(createContextInner(services, { credentials, auth: await authorizeRequest(services, credentials, '127.0.0.1') }));
    admin = createCaller(createContextInner(services, { credentials: { kind: 'token', token: gateway.adminToken, scheme: 'bearer' } }));
  });
  afterAll(() => gateway?.close());

  it('answers a chat completion as a typed JSON answer, and a stream as typed chunks', async () => {
    const answer = await caller.chat.completions({ model: 'mock-chat', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(answer.kind).toBe('json');
    if (answer.kind !== 'json') return;
    expect(answer.body.object).toBe('chat.completion');
    expect(answer.body.choices[0]!.message.content).toContain('Hello there');
    expect(answer.meta.provider).toBe('mock');

    const stream = await caller.chat.completions({ model: 'mock-chat', stream: true, messages: [{ role: 'user', content: 'Hello there' }] });
    expect(stream.kind).toBe('stream');
    if (stream.kind !== 'stream') return;
    let text = '';
    let done = false;
    for await (const part of stream.parts) {
      for (const { data } of part.events) {
        if (data === '[DONE]') done = true;
        else if ('choices' in data) text += data.choices[0]?.delta.content ?? '';
      }
    }
    expect(done).toBe(true);
    expect(text).toContain('Hello there');
  });

  it('answers messages, count_tokens, responses and compaction', async () => {
    const message = await caller.messages.create({ model: 'mock-chat', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.kind === 'json' && message.body.type).toBe('message');
    const streamed = await caller.messages.create({ model: 'mock-chat', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    const types: string[] = [];
    if (streamed.kind === 'stream') for await (const part of streamed.parts) for (const event of part.events) types.push(String(event.data.type));
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');

    const count = await caller.messages.countTokens({ model: 'mock-chat', messages: [{ role: 'user', content: 'Count me' }] });
    expect(count.input_tokens).toBeGreaterThan(0);

    const response = await caller.responses.create({ model: 'mock-chat', input: 'Hi' });
    expect(response.kind === 'json' && response.body.object).toBe('response');
    const compacted = await caller.responses.compact({ model: 'mock-chat', input: 'A long conversation to summarise.' });
    expect(compacted.body.object).toBe('response');
  });

  it('answers images, the catalog and the account data', async () => {
    const images = await caller.images.generate({ model: 'mock-image', prompt: 'a red square', response_format: 'b64_json' });
    expect(images.kind === 'json' && images.body.data[0]!.b64_json).toBeTruthy();
    const embeddings = await caller.embeddings.create({ model: 'mock-embedding-small', input: 'hello', encoding_format: 'float' });
    expect(embeddings.body.data[0]!.embedding).toHaveLength(1536);
    const moderation = await caller.moderations.create({ input: 'I am going to kill you' });
    expect(moderation.body.results[0]!.flagged).toBe(true);
    const speech = await caller.audio.speech({ model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'wav' });
    expect(speech.contentType).toBe('audio/wav');
    const video = await caller.videos.create({ model: 'mock-video', prompt: 'a calm sea', seconds: '1', size: '640x360' });
    expect((await caller.videos.get({ id: video.id })).prompt).toBe('a calm sea');
    const models = await caller.models.list();
    expect(models.data.map((model) => model.id)).toContain('mock-chat');
    const credits = await caller.account.credits();
    expect(credits.current_credits).toBeLessThanOrEqual(50);
    await gateway.gateway.services.billing.flush();
    const usage = await caller.account.usage({ page: 1, limit: 5 });
    expect(usage.pagination.total).toBeGreaterThan(0);
    const accounts = await admin.admin.accounts.list({ limit: 10, offset: 0 });
    expect(accounts.length).toBeGreaterThan(0);
  });

  it('serves the JSON procedures to the @trpc/client HTTP client with the same types', async () => {
    const client = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${gateway.url}/trpc` })] });
    const models = await client.models.list.query();
    expectTypeOf(models).toEqualTypeOf<Output<AppCaller['models']['list']>>();
    expect(models.object).toBe('list');
    const model = await client.models.get.query({ id: 'mock-chat' });
    expect(model.owned_by).toBe('umg');
  });
});

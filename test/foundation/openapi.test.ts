/**
 * /openapi.json: a valid OpenAPI 3.1 document (checked against the official
 * schema), one operation per row of the route table compat serves and nothing
 * else under /v1, and true to the wire: the requests the official `openai` and
 * `@anthropic-ai/sdk` clients send are accepted by the documented request
 * schemas, and the gateway's answers to them fit the documented answers.
 */
import Anthropic from '@anthropic-ai/sdk';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicErrorBodySchema, openAIErrorBodySchema, renderError } from '../../compat/error-body.js';
import { toOpenApiPath, type OpenApiDocument } from '../../compat/openapi.js';
import { ROUTES } from '../../compat/routes.js';
import { GatewayError } from '../../server/errors.js';
import { makePng } from '../images/image-e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

interface Exchange {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string;
  body: unknown;
  status: number;
  answerType: string;
  answer: unknown;
}

/** A fetch for the SDK clients that keeps what they sent and what came back. */
function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, { ...init, duplex: 'half' } as RequestInit);
    const sent = request.clone();
    const contentType = (request.headers.get('content-type') ?? '').split(';')[0]!.trim();
    let body: unknown;
    if (contentType === 'application/json') body = await sent.json();
    else if (contentType === 'multipart/form-data') body = formAsDocumented(await sent.formData());
    const response = await fetch(request);
    const answerType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    const answer = answerType === 'application/json' ? await response.clone().json() : undefined;
    const url = new URL(request.url);
    exchanges.push({ method: request.method, path: url.pathname, query: Object.fromEntries(url.searchParams), contentType, body, status: response.status, answerType, answer });
    return response;
  };
}

/** A form as its JSON Schema sees it: text fields as strings, a file as its (binary) content, repeated fields as arrays. */
function formAsDocumented(form: FormData): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of new Set(form.keys())) {
    const values = form.getAll(name).map((value) => (typeof value === 'string' ? value : `<${value.size} bytes>`));
    fields[name] = name.endsWith('[]') ? values : values[values.length - 1];
  }
  return fields;
}

function pointer(...segments: string[]): string {
  return segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

describe('/openapi.json', () => {
  let gateway: TestGateway;
  let document: OpenApiDocument;
  const exchanges: Exchange[] = [];
  // Query strings are text: the documented integer `page` is sent as "2".
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false, coerceTypes: true });

  function validatorAt(...segments: string[]): ValidateFunction {
    return ajv.compile({ $ref: `openapi#/${pointer(...segments)}` });
  }

  beforeAll(async () => {
    gateway = await startTestGateway();
    document = (await (await fetch(new URL('/openapi.json', gateway.url))).json()) as OpenApiDocument;
    ajv.addSchema(document as object, 'openapi');

    const { key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 1_000 });
    const openai = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0, fetch: recordingFetch(exchanges) });
    const anthropic = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, fetch: recordingFetch(exchanges) });

    await openai.models.list();
    await openai.models.retrieve('mock-chat');
    await openai.chat.completions.create({
      model: 'mock-chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
      temperature: 0.2,
      max_completion_tokens: 64,
    });
    await anthropic.messages.create({
      model: 'mock-chat',
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      tools: [{ name: 'get_weather', description: 'Weather by city', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    await anthropic.messages.countTokens({ model: 'mock-chat', messages: [{ role: 'user', content: 'Count me' }] });
    const response = await openai.responses.create({ model: 'mock-chat', instructions: 'Be brief.', input: 'Remember the code word: pelican.' });
    await openai.responses.compact({ model: 'mock-chat', previous_response_id: response.id, input: 'And then?' });
    await openai.embeddings.create({ model: 'mock-embedding-small', input: ['one', 'two'], encoding_format: 'float' });
    await openai.moderations.create({ model: 'text-moderation-latest', input: 'Thank you for the lovely dinner!' });
    const images = await openai.images.generate({ model: 'mock-image', prompt: 'a lighthouse', n: 1, size: '1024x1024' });
    await recordingFetch(exchanges)(images.data![0]!.url!);
    await openai.images.edit({ model: 'mock-image', prompt: 'make it blue', image: await toFile(makePng(64, 64), 'image.png', { type: 'image/png' }) });
    const speech = Buffer.from(await (await openai.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there.', response_format: 'wav' })).arrayBuffer());
    await openai.audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(speech, 'speech.wav', { type: 'audio/wav' }), response_format: 'json' });
    await openai.audio.translations.create({ model: 'mock-whisper', file: await toFile(speech, 'speech.wav', { type: 'audio/wav' }) });
    const video = await openai.videos.create({ model: 'mock-video', prompt: 'a paper boat on a pond', size: '640x360' as never, seconds: '1' as never });
    await openai.videos.list({ limit: 5, order: 'desc' });
    await openai.videos.retrieve(video.id);
    await openai.videos.delete(video.id);
    const sent = (path: string) => new URL(path, gateway.url).toString();
    await recordingFetch(exchanges)(sent('/v1/credits'), { headers: { authorization: `Bearer ${key}` } });
    await recordingFetch(exchanges)(sent('/v1/discounts/my-discounts'), { headers: { 'x-api-key': key } });
    await recordingFetch(exchanges)(sent('/v1/usage?page=1&limit=5&model=mock-chat'), { headers: { authorization: `Bearer ${key}` } });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    expect(document.openapi).toBe('3.1.0');
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('has one operation per row of the route table, and no other /v1 path', () => {
    const documented = Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`));
    const served = ROUTES.map((route) => `${route.method} ${toOpenApiPath(route.path)}`);
    expect(documented.sort()).toEqual(served.sort());
    for (const route of ROUTES) {
      const operation = document.paths[toOpenApiPath(route.path)]![route.method.toLowerCase()]! as { security: object[]; responses: Record<string, { description: string; content?: Record<string, { schema?: { $ref?: string } }> }> };
      expect(operation.security).toEqual(route.auth === 'key' ? [{ bearer: [] }, { apiKey: [] }] : []);
      expect(operation.responses['200']).toBeDefined();
      const errorRef = route.family === 'anthropic' ? '#/components/schemas/AnthropicError' : '#/components/schemas/OpenAIError';
      expect(operation.responses['400']!.content!['application/json']!.schema!.$ref).toBe(errorRef);
      if (route.auth === 'key') expect(operation.responses['401']!.description).toContain('INVALID_KEY');
    }
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
  });

  it('documents the error bodies renderError writes', () => {
    const error = new GatewayError('INVALID_KEY', 'The API key is not valid.');
    expect(openAIErrorBodySchema.safeParse(renderError('openai', error, 'req_1').body).success).toBe(true);
    expect(anthropicErrorBodySchema.safeParse(renderError('anthropic', error, 'req_1').body).success).toBe(true);
    const invalid = new GatewayError('INVALID_REQUEST', "Missing 'model'.", { param: 'model' });
    expect(openAIErrorBodySchema.safeParse(renderError('openai', invalid, 'req_2').body).success).toBe(true);
    expect(validatorAt('components', 'schemas', 'OpenAIError')(renderError('openai', invalid, 'req_2').body)).toBe(true);
    expect(validatorAt('components', 'schemas', 'AnthropicError')(renderError('anthropic', error, 'req_3').body)).toBe(true);
  });

  it("accepts every request the SDKs sent, and their answers fit the documented 200", () => {
    const seen = new Set<string>();
    for (const exchange of exchanges) {
      const route = ROUTES.find((candidate) => candidate.method === exchange.method && new RegExp(`^${candidate.path.replace(/:\w+/g, '[^/]+')}$`).test(exchange.path));
      if (!route) continue;
      const label = `${exchange.method} ${exchange.path}`;
      expect(exchange.status, label).toBe(200);
      const path = toOpenApiPath(route.path);
      const method = route.method.toLowerCase();
      seen.add(`${route.method} ${route.path}`);
      if (exchange.body !== undefined) {
        const validate = validatorAt('paths', path, method, 'requestBody', 'content', exchange.contentType, 'schema');
        expect(validate(structuredClone(exchange.body)), `${label}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      const parameters = (document.paths[path]![method] as { parameters?: { name: string; in: string }[] }).parameters ?? [];
      for (const [name, value] of Object.entries(exchange.query)) {
        const index = parameters.findIndex((parameter) => parameter.in === 'query' && parameter.name === name);
        expect(index, `${label}: query parameter ${name} is documented`).toBeGreaterThanOrEqual(0);
        const validate = validatorAt('paths', path, method, 'parameters', String(index), 'schema');
        expect(validate(value), `${label} ?${name}=${value}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      const documented = (document.paths[path]![method] as { responses: Record<string, { content: Record<string, { schema?: object }> }> }).responses['200']!.content;
      const answerType = Object.keys(documented).find((type) => type === exchange.answerType || (type.endsWith('/*') && exchange.answerType.startsWith(type.slice(0, -1))));
      expect(answerType, `${label} answered ${exchange.answerType}, documented: ${Object.keys(documented).join(', ')}`).toBeDefined();
      if (exchange.answer !== undefined && documented[answerType!]!.schema) {
        const validate = validatorAt('paths', path, method, 'responses', '200', 'content', answerType!, 'schema');
        expect(validate(exchange.answer), `${label} answer: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
    }
    // Every route but the video download (its file is made in the background) was exercised.
    expect([...seen].sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).filter((route) => route !== 'GET /v1/videos/:id/content').sort());
  });
});

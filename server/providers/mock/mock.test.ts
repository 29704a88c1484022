import { describe, expect, it } from 'vitest';
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalStreamEvent,
  CanonicalTool,
} from '../canonical.js';
import { estimateRequestTokens } from '../request-tokens.js';
import { countTextTokens } from '../../tokenizer.js';
import { MOCK_CLOSING_SENTENCE, generateMock, splitArguments, splitIntoWordChunks, streamMock } from './mock.adapter.js';
import { createRandom, mentionsTool, properNounsOf, splitIdentifier } from './mock-prompt.js';
import { generateSchemaValue, type SchemaValueHints } from './mock-schema-value.js';

// ---------------------------------------------------------------------------
// A tiny JSON-schema validator, enough for the keywords the generator claims.

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    default:
      return false;
  }
}

const FORMATS: Record<string, RegExp> = {
  email: /^[^@\s]+@[^@\s]+\.[a-z]+$/,
  uri: /^https?:\/\/\S+$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  ipv4: /^(\d{1,3}\.){3}\d{1,3}$/,
};

function resolveRef(root: unknown, ref: string): unknown {
  let node = root;
  for (const key of ref.replace(/^#\/?/, '').split('/').filter(Boolean)) node = (node as Schema)[key];
  return node;
}

function validate(schema: unknown, value: unknown, root: unknown = schema, path = '$'): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value allowed`];
  if (!isObject(schema)) return [];
  const errors: string[] = [];
  const fail = (message: string) => errors.push(`${path}: ${message}`);
  if (typeof schema.$ref === 'string') errors.push(...validate(resolveRef(root, schema.$ref), value, root, path));
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((type) => typeMatches(type, value))) fail(`expected ${types.join('|')}, got ${JSON.stringify(value)}`);
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) fail('const');
  if (Array.isArray(schema.enum) && !schema.enum.some((item) => JSON.stringify(item) === JSON.stringify(value))) {
    fail(`${JSON.stringify(value)} not in enum`);
  }
  if (Array.isArray(schema.allOf)) for (const branch of schema.allOf) errors.push(...validate(branch, value, root, path));
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((branch) => validate(branch, value, root, path).length === 0)) {
    fail('no anyOf branch matches');
  }
  if (Array.isArray(schema.oneOf)) {
    const matching = schema.oneOf.filter((branch) => validate(branch, value, root, path).length === 0).length;
    if (matching !== 1) fail(`${matching} oneOf branches match`);
  }
  if (typeof value === 'number') {
    const bound = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
    const minimum = bound('minimum');
    const maximum = bound('maximum');
    if (minimum !== undefined && (schema.exclusiveMinimum === true ? value <= minimum : value < minimum)) fail('minimum');
    if (maximum !== undefined && (schema.exclusiveMaximum === true ? value >= maximum : value > maximum)) fail('maximum');
    if (bound('exclusiveMinimum') !== undefined && value <= bound('exclusiveMinimum')!) fail('exclusiveMinimum');
    if (bound('exclusiveMaximum') !== undefined && value >= bound('exclusiveMaximum')!) fail('exclusiveMaximum');
    const step = bound('multipleOf');
    if (step !== undefined && Math.abs(value / step - Math.round(value / step)) > 1e-9) fail(`multipleOf ${step}`);
  }
  if (typeof value === 'string') {
    const length = Array.from(value).length;
    if (typeof schema.minLength === 'number' && length < schema.minLength) fail('minLength');
    if (typeof schema.maxLength === 'number' && length > schema.maxLength) fail('maxLength');
    const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
    if (format && !format.test(value)) fail(`format ${String(schema.format)}: ${value}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) fail('minItems');
    if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) fail('maxItems');
    if (schema.uniqueItems === true && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) {
      fail('uniqueItems');
    }
    const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, index) => {
      const itemSchema = index < tuple.length ? tuple[index] : Array.isArray(schema.items) ? undefined : schema.items;
      if (itemSchema !== undefined) errors.push(...validate(itemSchema, item, root, `${path}[${index}]`));
    });
  }
  if (isObject(value)) {
    const properties = isObject(schema.properties) ? schema.properties : {};
    for (const key of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (!(key in value)) fail(`missing required ${key}`);
    }
    const keys = Object.keys(value);
    if (typeof schema.minProperties === 'number' && keys.length < schema.minProperties) fail('minProperties');
    if (typeof schema.maxProperties === 'number' && keys.length > schema.maxProperties) fail('maxProperties');
    if (isObject(schema.dependentRequired)) {
      for (const [key, needed] of Object.entries(schema.dependentRequired)) {
        if (key in value) for (const other of needed as string[]) if (!(other in value)) fail(`${key} needs ${other}`);
      }
    }
    for (const key of keys) {
      if (key in properties) errors.push(...validate(properties[key], value[key], root, `${path}.${key}`));
      else if (schema.additionalProperties === false) fail(`unexpected property ${key}`);
      else if (isObject(schema.additionalProperties)) {
        errors.push(...validate(schema.additionalProperties, value[key], root, `${path}.${key}`));
      }
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------

const user = (text: string): CanonicalMessage => ({ role: 'user', content: [{ type: 'text', text }] });

function makeRequest(extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'mock-large', stream: false, messages: [user('What is the capital of France?')], ...extra };
}

const weatherTool: CanonicalTool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string', description: 'City name' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    },
    required: ['city', 'unit'],
    additionalProperties: false,
  },
};

const stockTool: CanonicalTool = {
  name: 'lookupStockPrice',
  parameters: {
    type: 'object',
    properties: { ticker: { type: 'string', maxLength: 5 } },
    required: ['ticker'],
  },
};

function textOf(response: CanonicalResponse): string {
  return response.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function toolCallsOf(response: CanonicalResponse) {
  return response.content.filter((part) => part.type === 'tool_call');
}

const options = { id: 'mock-test-1' };

describe('determinism', () => {
  it('gives the same answer to the same prompt', () => {
    const request = makeRequest();
    expect(generateMock(request, options)).toEqual(generateMock(structuredClone(request), options));
    expect(streamMock(request, options)).toEqual(streamMock(request, options));
  });

  it('gives different answers to different prompts', () => {
    const answers = new Set(
      ['What is the capital of France?', 'Write a haiku about rain.', 'Explain TCP in one line.', 'Count to three.'].map(
        (text) => textOf(generateMock(makeRequest({ messages: [user(text)] }), options)),
      ),
    );
    expect(answers.size).toBe(4);
  });

  it('quotes the user and ends with the closing sentence', () => {
    const response = generateMock(makeRequest(), options);
    expect(response).toMatchObject({ id: 'mock-test-1', model: 'mock-large', finishReason: 'stop', stopSequence: null });
    expect(textOf(response)).toMatch(/^Mock answer to: "What is the capital of France\?"\. The \w+ \w+ \w+ \w+ beside the \w+ \w+\. /);
    expect(textOf(response).endsWith(MOCK_CLOSING_SENTENCE)).toBe(true);
  });

  it('quotes only the first words of a long message', () => {
    const long = 'one two three four five six seven eight nine ten eleven';
    expect(textOf(generateMock(makeRequest({ messages: [user(long)] }), options))).toContain(
      '"one two three four five six seven eight…"',
    );
  });

  it('changes with the seed', () => {
    expect(textOf(generateMock(makeRequest({ seed: 1 }), options))).not.toBe(
      textOf(generateMock(makeRequest({ seed: 2 }), options)),
    );
  });
});

describe('usage', () => {
  it('counts the prompt with the tokenizer estimate and the answer with the tokenizer', () => {
    const request = makeRequest({ system: [{ type: 'text', text: 'Be brief.' }] });
    const response = generateMock(request, options);
    expect(response.usage).toEqual({
      inputTokens: estimateRequestTokens(request),
      outputTokens: countTextTokens(textOf(response)),
    });
  });
});

describe('maxOutputTokens', () => {
  it('cuts the answer at that many tokens with finishReason length', () => {
    const full = textOf(generateMock(makeRequest(), options));
    for (const max of [1, 5, 12]) {
      const response = generateMock(makeRequest({ maxOutputTokens: max }), options);
      expect(response.finishReason).toBe('length');
      expect(response.usage.outputTokens).toBeLessThanOrEqual(max);
      expect(response.usage.outputTokens).toBe(countTextTokens(textOf(response)));
      expect(full.startsWith(textOf(response))).toBe(true);
    }
  });

  it('does not cut an answer that fits', () => {
    const full = generateMock(makeRequest(), options);
    const exact = generateMock(makeRequest({ maxOutputTokens: full.usage.outputTokens }), options);
    expect(exact.finishReason).toBe('stop');
    expect(textOf(exact)).toBe(textOf(full));
  });

  it('never emits partial tool arguments', () => {
    const response = generateMock(
      makeRequest({ tools: [weatherTool], toolChoice: { type: 'required' }, maxOutputTokens: 3 }),
      options,
    );
    expect(response.finishReason).toBe('length');
    expect(toolCallsOf(response)).toEqual([]);
    expect(response.usage.outputTokens).toBe(0);
  });
});

describe('stop sequences', () => {
  it('cuts before the first stop sequence that occurs', () => {
    const response = generateMock(makeRequest({ stop: ['offline'] }), options);
    expect(response.finishReason).toBe('stop_sequence');
    expect(response.stopSequence).toBe('offline');
    expect(textOf(response).endsWith('This reply was generated ')).toBe(true);
    expect(textOf(response)).not.toContain('offline');
    expect(response.usage.outputTokens).toBe(countTextTokens(textOf(response)));
  });

  it('picks the earliest of several sequences, wherever it is in the list', () => {
    const response = generateMock(makeRequest({ stop: ['provider', 'beside', 'never-there'] }), options);
    expect(response.stopSequence).toBe('beside');
    expect(textOf(response)).not.toContain('beside');
  });

  it('ignores sequences that do not occur', () => {
    const response = generateMock(makeRequest({ stop: ['zebra crossing'] }), options);
    expect(response.finishReason).toBe('stop');
    expect(response.stopSequence).toBeNull();
  });

  it('reports length when the budget runs out before the stop sequence', () => {
    const response = generateMock(makeRequest({ stop: ['offline'], maxOutputTokens: 3 }), options);
    expect(response.finishReason).toBe('length');
    expect(response.stopSequence).toBeNull();
  });
});

describe('tool calls', () => {
  const weatherQuestion = user("What's the weather in Paris today?");

  it('calls a tool whose name is mentioned by one of its words', () => {
    const response = generateMock(makeRequest({ messages: [weatherQuestion], tools: [stockTool, weatherTool] }), options);
    expect(response.finishReason).toBe('tool_calls');
    const calls = toolCallsOf(response);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ type: 'tool_call', name: 'get_weather' });
    const args = JSON.parse(calls[0].arguments) as Record<string, unknown>;
    expect(args.city).toBe('Paris');
    expect(validate(weatherTool.parameters, args)).toEqual([]);
    expect(response.usage.outputTokens).toBe(countTextTokens(calls[0].arguments));
  });

  it('splits camelCase names and ignores common words', () => {
    const stockQuestion = makeRequest({ messages: [user('How is the stock of ACME doing?')], tools: [weatherTool, stockTool] });
    expect(toolCallsOf(generateMock(stockQuestion, options)).map((call) => call.name)).toEqual(['lookupStockPrice']);
    const getOnly = makeRequest({ messages: [user('Get me a coffee, please.')], tools: [weatherTool] });
    expect(generateMock(getOnly, options).finishReason).toBe('stop');
  });

  it('does not call a tool that is not mentioned when the choice is auto', () => {
    const response = generateMock(makeRequest({ tools: [weatherTool], toolChoice: { type: 'auto' } }), options);
    expect(toolCallsOf(response)).toEqual([]);
    expect(response.finishReason).toBe('stop');
  });

  it('calls the first tool when a call is required', () => {
    const response = generateMock(makeRequest({ tools: [weatherTool, stockTool], toolChoice: { type: 'required' } }), options);
    expect(toolCallsOf(response).map((call) => call.name)).toEqual(['get_weather']);
    expect(response.finishReason).toBe('tool_calls');
  });

  it('calls the named tool', () => {
    const response = generateMock(
      makeRequest({ messages: [weatherQuestion], tools: [weatherTool, stockTool], toolChoice: { type: 'tool', name: 'lookupStockPrice' } }),
      options,
    );
    const calls = toolCallsOf(response);
    expect(calls.map((call) => call.name)).toEqual(['lookupStockPrice']);
    expect(validate(stockTool.parameters, JSON.parse(calls[0].arguments))).toEqual([]);
  });

  it('never calls a tool when the choice is none', () => {
    const response = generateMock(
      makeRequest({ messages: [weatherQuestion], tools: [weatherTool], toolChoice: { type: 'none' } }),
      options,
    );
    expect(toolCallsOf(response)).toEqual([]);
    expect(response.finishReason).toBe('stop');
  });

  it('calls several mentioned tools in parallel unless parallel calls are off', () => {
    const messages = [user('What is the weather in Oslo and the stock price of ACME?')];
    const parallel = generateMock(makeRequest({ messages, tools: [weatherTool, stockTool] }), options);
    const calls = toolCallsOf(parallel);
    expect(calls.map((call) => call.name)).toEqual(['get_weather', 'lookupStockPrice']);
    expect(new Set(calls.map((call) => call.id)).size).toBe(2);
    const single = generateMock(makeRequest({ messages, tools: [weatherTool, stockTool], parallelToolCalls: false }), options);
    expect(toolCallsOf(single).map((call) => call.name)).toEqual(['get_weather']);
  });

  it('derives tool-call ids from the response id', () => {
    const request = makeRequest({ messages: [weatherQuestion], tools: [weatherTool] });
    const first = toolCallsOf(generateMock(request, { id: 'a' }))[0];
    const second = toolCallsOf(generateMock(request, { id: 'b' }))[0];
    expect(first.id).toMatch(/^call_/);
    expect(first.id).not.toBe(second.id);
    expect(first.arguments).toBe(second.arguments);
  });

  it('answers a tool result with text that mentions it', () => {
    const messages: CanonicalMessage[] = [
      weatherQuestion,
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: 'Sunny, 24 degrees' }] },
    ];
    const response = generateMock(makeRequest({ messages, tools: [weatherTool] }), options);
    expect(response.finishReason).toBe('stop');
    expect(toolCallsOf(response)).toEqual([]);
    expect(textOf(response)).toContain('The get_weather tool returned: "Sunny, 24 degrees".');
  });

  it('mentions every result of a parallel call, and errors as errors', () => {
    const messages: CanonicalMessage[] = [
      user('Weather in Oslo and the stock price of ACME?'),
      {
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{}' },
          { type: 'tool_call', id: 'c2', name: 'lookupStockPrice', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'Snow' }] },
      { role: 'tool', toolCallId: 'c2', name: 'lookupStockPrice', isError: true, content: [{ type: 'text', text: 'unknown ticker' }] },
    ];
    const text = textOf(generateMock(makeRequest({ messages, tools: [weatherTool, stockTool] }), options));
    expect(text).toContain('The get_weather tool returned: "Snow".');
    expect(text).toContain('The lookupStockPrice tool failed with: "unknown ticker".');
  });
});

describe('response formats', () => {
  it('answers json_object with a JSON object', () => {
    const response = generateMock(makeRequest({ responseFormat: { type: 'json_object' } }), options);
    const parsed = JSON.parse(textOf(response)) as { answer: string };
    expect(parsed.answer).toContain('Mock answer to: "What is the capital of France?".');
  });

  it('answers json_schema with a value valid against the schema', () => {
    const schema = {
      type: 'object',
      properties: {
        capital: { type: 'string' },
        population: { type: 'integer', minimum: 0 },
        summary: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2, uniqueItems: true },
      },
      required: ['capital', 'population', 'summary', 'tags'],
      additionalProperties: false,
    };
    const response = generateMock(
      makeRequest({ responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true } }),
      options,
    );
    const value = JSON.parse(textOf(response)) as Record<string, unknown>;
    expect(validate(schema, value)).toEqual([]);
    expect(value.summary).toContain('Mock answer to');
  });
});

describe('thinking', () => {
  it('thinks first when reasoning is requested, and counts it', () => {
    const response = generateMock(makeRequest({ reasoning: { effort: 'medium' } }), options);
    const [thinking, text] = response.content;
    expect(thinking.type).toBe('thinking');
    expect(text.type).toBe('text');
    if (thinking.type !== 'thinking' || text.type !== 'text') return;
    expect(thinking.signature).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(response.usage.reasoningTokens).toBe(countTextTokens(thinking.text));
    expect(response.usage.outputTokens).toBe(countTextTokens(thinking.text) + countTextTokens(text.text));
  });

  it('thinks longer with more effort and stays within a budget', () => {
    const length = (reasoning: CanonicalRequest['reasoning']) => generateMock(makeRequest({ reasoning }), options).usage.reasoningTokens ?? 0;
    expect(length({ effort: 'low' })).toBeLessThan(length({ effort: 'high' }));
    expect(length({ budgetTokens: 5 })).toBeLessThanOrEqual(5);
    expect(length({ budgetTokens: 16_000 })).toBeGreaterThan(0);
  });

  it('does not think when reasoning is disabled or absent', () => {
    for (const reasoning of [undefined, { disabled: true, budgetTokens: 2048 }, { summary: 'auto' }]) {
      const response = generateMock(makeRequest({ reasoning }), options);
      expect(response.content.map((part) => part.type)).toEqual(['text']);
      expect(response.usage.reasoningTokens).toBeUndefined();
    }
  });

  it('spends the output budget on thinking first', () => {
    const response = generateMock(makeRequest({ reasoning: { effort: 'high' }, maxOutputTokens: 4 }), options);
    expect(response.finishReason).toBe('length');
    expect(response.content.map((part) => part.type)).toEqual(['thinking']);
    expect(response.usage.outputTokens).toBeLessThanOrEqual(4);
  });
});

describe('streaming', () => {
  /** Rebuilds a response from events, checking their order on the way. */
  function collect(events: CanonicalStreamEvent[]) {
    expect(events[0].type).toBe('start');
    expect(events.at(-1)?.type).toBe('finish');
    const parts: Record<number, { type: string; text: string; id?: string; name?: string; signature?: string }> = {};
    let open: number | null = null;
    let deltas = 0;
    for (const event of events.slice(1, -1)) {
      switch (event.type) {
        case 'text-start':
        case 'thinking-start':
          expect(open).toBeNull();
          open = event.index;
          parts[event.index] = { type: event.type === 'text-start' ? 'text' : 'thinking', text: '' };
          break;
        case 'tool-call-start':
          expect(open).toBeNull();
          open = event.index;
          parts[event.index] = { type: 'tool_call', text: '', id: event.id, name: event.name };
          break;
        case 'text-delta':
        case 'thinking-delta':
          expect(event.index).toBe(open);
          parts[event.index].text += event.text;
          deltas++;
          break;
        case 'tool-call-delta':
          expect(event.index).toBe(open);
          parts[event.index].text += event.argumentsDelta;
          deltas++;
          break;
        case 'thinking-signature':
          parts[event.index].signature = event.signature;
          break;
        case 'part-end':
          expect(event.index).toBe(open);
          open = null;
          break;
        default:
          throw new Error(`unexpected ${event.type}`);
      }
    }
    return { parts: Object.values(parts), deltas };
  }

  const cases: [string, CanonicalRequest][] = [
    ['text', makeRequest()],
    ['thinking and text', makeRequest({ reasoning: { budgetTokens: 4096 } })],
    ['tool calls', makeRequest({ messages: [user('Weather in Oslo and the stock price of ACME?')], tools: [weatherTool, stockTool] })],
    ['stop sequence', makeRequest({ stop: ['beside'] })],
    ['length', makeRequest({ maxOutputTokens: 7 })],
  ];

  it.each(cases)('gives the same content and usage as the non-stream answer (%s)', (_name, request) => {
    const response = generateMock(request, options);
    const events = streamMock({ ...request, stream: true }, options);
    const { parts, deltas } = collect(events);
    expect(deltas).toBeGreaterThan(response.content.length);
    expect(parts).toEqual(
      response.content.map((part) =>
        part.type === 'tool_call'
          ? { type: 'tool_call', text: part.arguments, id: part.id, name: part.name }
          : part.type === 'thinking'
            ? { type: 'thinking', text: part.text, signature: part.signature }
            : { type: part.type, text: part.type === 'text' ? part.text : '' },
      ),
    );
    expect(events[0]).toEqual({ type: 'start', id: response.id, model: response.model, usage: { inputTokens: response.usage.inputTokens, outputTokens: 0 } });
    expect(events.at(-1)).toEqual({
      type: 'finish',
      finishReason: response.finishReason,
      stopSequence: response.stopSequence,
      usage: response.usage,
    });
  });

  it('sends text a few words at a time and arguments in several pieces', () => {
    expect(splitIntoWordChunks('one two three four five six seven', 3)).toEqual(['one two three ', 'four five six ', 'seven']);
    expect(splitIntoWordChunks('  lead and trail  ', 2)).toEqual(['  lead and ', 'trail  ']);
    expect(splitArguments('{"city":"Paris"}')).toEqual(['{"city', '":"Par', 'is"}']);
    expect(splitArguments('{"e":"😀😀"}').join('')).toBe('{"e":"😀😀"}');
    for (const piece of splitArguments('{"e":"😀😀😀😀"}')) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });
});

describe('prompt helpers', () => {
  it('splits identifiers', () => {
    expect(splitIdentifier('get_weather')).toEqual(['get', 'weather']);
    expect(splitIdentifier('lookupStockPrice')).toEqual(['lookup', 'stock', 'price']);
    expect(splitIdentifier('getHTTPStatus-code')).toEqual(['get', 'http', 'status', 'code']);
  });

  it('finds tool mentions', () => {
    expect(mentionsTool("what's the weather in Paris?", 'get_weather')).toBe(true);
    expect(mentionsTool('please call get_weather', 'get_weather')).toBe(true);
    expect(mentionsTool('list the files', 'list_files')).toBe(true);
    expect(mentionsTool('list everything', 'list_files')).toBe(false);
    expect(mentionsTool('get me something', 'get_weather')).toBe(false);
  });

  it('finds proper nouns, mid-sentence first', () => {
    expect(properNounsOf("What's the weather in Paris? London is rainy.")).toEqual(['Paris', 'London']);
  });
});

describe('generateSchemaValue', () => {
  const hints = (): SchemaValueHints => ({
    properNouns: ['Paris'],
    words: ['weather', 'forecast'],
    excerpt: 'What is the weather in Paris',
    answer: 'Mock answer.',
    random: createRandom(42),
  });

  const schemas: [string, Schema][] = [
    ['empty object', { type: 'object' }],
    ['enum and bounds', weatherTool.parameters],
    ['all scalar types', {
      type: 'object',
      properties: {
        s: { type: 'string', minLength: 30, maxLength: 40 },
        short: { type: 'string', maxLength: 2 },
        n: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        i: { type: 'integer', minimum: 100, maximum: 100 },
        negative: { type: 'integer', maximum: -10 },
        step: { type: 'number', minimum: 0.1, maximum: 1, multipleOf: 0.25 },
        b: { type: 'boolean' },
        z: { type: 'null' },
        c: { const: 'fixed' },
      },
      required: ['s', 'short', 'n', 'i', 'negative', 'step', 'b', 'z', 'c'],
    }],
    ['draft-4 exclusive bounds', {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 5, exclusiveMinimum: true, maximum: 6 } },
      required: ['n'],
    }],
    ['formats', {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        when: { type: 'string', format: 'date-time' },
        day: { type: 'string', format: 'date' },
        id: { type: 'string', format: 'uuid' },
        link: { type: 'string', format: 'uri' },
        ip: { type: 'string', format: 'ipv4' },
      },
      required: ['email', 'when', 'day', 'id', 'link', 'ip'],
    }],
    ['arrays', {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 10 }, minItems: 3, maxItems: 3, uniqueItems: true },
        flags: { type: 'array', items: { type: 'boolean' }, minItems: 2, uniqueItems: true },
        tuple: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
        empty: { type: 'array', items: { type: 'string' }, maxItems: 0 },
        colors: { type: 'array', items: { enum: ['red', 'green', 'blue'] }, minItems: 3, uniqueItems: true },
      },
      required: ['list', 'flags', 'tuple', 'empty', 'colors'],
    }],
    ['nested objects', {
      type: 'object',
      properties: {
        address: {
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string', minLength: 5 } },
          required: ['street', 'city', 'zip'],
          additionalProperties: false,
        },
        meta: { type: 'object', minProperties: 2, additionalProperties: { type: 'integer' } },
      },
      required: ['address', 'meta'],
    }],
    ['anyOf, oneOf and nullable types', {
      type: 'object',
      properties: {
        maybe: { anyOf: [{ type: 'null' }, { type: 'string', minLength: 3 }] },
        choice: { oneOf: [{ type: 'string', enum: ['a'] }, { type: 'integer' }] },
        nullable: { type: ['null', 'integer'], minimum: 3 },
      },
      required: ['maybe', 'choice', 'nullable'],
    }],
    ['allOf', {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'integer', minimum: 2 } }, required: ['b'] },
      ],
    }],
    ['$ref and recursion', {
      type: 'object',
      $defs: {
        node: {
          type: 'object',
          properties: { label: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
          required: ['label', 'children'],
        },
      },
      properties: { root: { $ref: '#/$defs/node' } },
      required: ['root'],
    }],
    ['definitions and dependencies', {
      type: 'object',
      definitions: { unit: { type: 'string', enum: ['kg', 'lb'] } },
      properties: { weight: { type: 'number' }, unit: { $ref: '#/definitions/unit' } },
      dependentRequired: { weight: ['unit'] },
    }],
  ];

  it.each(schemas)('generates a valid value (%s)', (_name, schema) => {
    const value = generateSchemaValue(schema, hints());
    expect(validate(schema, value), JSON.stringify(value)).toEqual([]);
    expect(generateSchemaValue(schema, hints())).toEqual(value);
  });

  it('fills strings from the prompt by property name', () => {
    const value = generateSchemaValue(
      {
        type: 'object',
        properties: { location: { type: 'string' }, query: { type: 'string' }, summary: { type: 'string' } },
        required: ['location', 'query', 'summary'],
      },
      hints(),
    );
    expect(value).toEqual({ location: 'Paris', query: 'What is the weather in Paris', summary: 'Mock answer.' });
  });

  it('adds one optional property when nothing is required', () => {
    const value = generateSchemaValue(
      { type: 'object', properties: { nested: { type: 'object' }, name: { type: 'string' }, other: { type: 'string' } } },
      hints(),
    ) as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['name']);
  });
});

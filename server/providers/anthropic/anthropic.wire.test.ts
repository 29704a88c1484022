import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.js';
import { parseOrThrow } from '../../validation.js';
import { countTokensRequestSchema, messagesRequestSchema } from './anthropic.wire.js';

const base = { model: 'claude-x', max_tokens: 1024, messages: [{ role: 'user', content: 'Hello' }] };

/** The `param` of the 400 the gateway would answer, or undefined when the body is accepted. */
function paramOf(body: unknown, schema: typeof messagesRequestSchema | typeof countTokensRequestSchema = messagesRequestSchema) {
  try {
    parseOrThrow(schema, body);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return (error as GatewayError).param;
  }
}

describe('messagesRequestSchema: bounds and required fields', () => {
  it('accepts a minimal request', () => {
    expect(paramOf(base)).toBeUndefined();
  });

  it('requires max_tokens, an integer of at least 1', () => {
    expect(paramOf({ ...base, max_tokens: undefined })).toBe('max_tokens');
    expect(paramOf({ ...base, max_tokens: 0 })).toBe('max_tokens');
    expect(paramOf({ ...base, max_tokens: 1.5 })).toBe('max_tokens');
    expect(paramOf({ ...base, max_tokens: '100' })).toBe('max_tokens');
    expect(paramOf({ ...base, max_tokens: 32000 })).toBeUndefined();
  });

  it('requires a non-empty model and a non-empty messages array', () => {
    expect(paramOf({ ...base, model: '' })).toBe('model');
    expect(paramOf({ ...base, model: undefined })).toBe('model');
    expect(paramOf({ ...base, messages: [] })).toBe('messages');
    expect(paramOf({ ...base, messages: undefined })).toBe('messages');
  });

  it('rejects an unknown role and accepts system mid-conversation', () => {
    expect(paramOf({ ...base, messages: [{ role: 'tool', content: 'x' }] })).toBe('messages[0].role');
    expect(
      paramOf({
        ...base,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'Be brief from now on.' },
          { role: 'user', content: 'b' },
        ],
      }),
    ).toBeUndefined();
  });

  it('bounds temperature to 0..1 and top_p to 0..1', () => {
    expect(paramOf({ ...base, temperature: 1.5 })).toBe('temperature');
    expect(paramOf({ ...base, temperature: -0.1 })).toBe('temperature');
    expect(paramOf({ ...base, top_p: 2 })).toBe('top_p');
    expect(paramOf({ ...base, temperature: 0, top_p: 0.9, top_k: 40 })).toBeUndefined();
  });

  it('needs stop_sequences to be strings', () => {
    expect(paramOf({ ...base, stop_sequences: ['END', 3] })).toBe('stop_sequences[1]');
    expect(paramOf({ ...base, stop_sequences: ['END'] })).toBeUndefined();
  });

  it('accepts null for optional fields', () => {
    expect(paramOf({ ...base, system: null, temperature: null, tools: null, metadata: null })).toBeUndefined();
  });
});

describe('messagesRequestSchema: content blocks', () => {
  const withBlocks = (content: unknown) => ({ ...base, messages: [{ role: 'user', content }] });

  it('names the field of a bad known block', () => {
    expect(paramOf(withBlocks([{ type: 'text', text: 'ok' }, { type: 'text' }]))).toBe('messages[0].content[1].text');
    expect(paramOf(withBlocks([{ type: 'image', source: { type: 'base64', data: 'AAAA' } }]))).toBe(
      'messages[0].content[0].source.media_type',
    );
    expect(paramOf(withBlocks([{ type: 'image', source: { type: 'ftp', url: 'x' } }]))).toBe(
      'messages[0].content[0].source.type',
    );
    expect(paramOf(withBlocks([{ type: 'image' }]))).toBe('messages[0].content[0].source');
    expect(paramOf(withBlocks([{ type: 'tool_result' }]))).toBe('messages[0].content[0].tool_use_id');
    expect(paramOf(withBlocks([{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }]))).toBe(
      'messages[0].content[0].content[0].text',
    );
    expect(paramOf(withBlocks([{ type: 'tool_result', tool_use_id: 't', content: 5 }]))).toBe(
      'messages[0].content[0].content',
    );
  });

  it('names the type of a block without one', () => {
    expect(paramOf(withBlocks([{ type: 'text', text: 'ok' }, { text: 'no type' }]))).toBe('messages[0].content[1].type');
    expect(paramOf(withBlocks(['just a string']))).toBe('messages[0].content[0]');
    expect(paramOf(withBlocks(42))).toBe('messages[0].content');
    expect(paramOf({ ...base, messages: [{ role: 'user' }] })).toBe('messages[0].content');
  });

  it('validates assistant blocks', () => {
    const assistant = (content: unknown) => ({
      ...base,
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content },
      ],
    });
    expect(paramOf(assistant([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: 'x' }]))).toBe(
      'messages[1].content[0].input',
    );
    expect(paramOf(assistant([{ type: 'tool_use', id: 'toolu_1', name: 'f', input: [1] }]))).toBe(
      'messages[1].content[0].input',
    );
    expect(paramOf(assistant([{ type: 'thinking', thinking: 'hm' }]))).toBe('messages[1].content[0].signature');
    expect(paramOf(assistant([{ type: 'redacted_thinking' }]))).toBe('messages[1].content[0].data');
    expect(
      paramOf(
        assistant([
          { type: 'thinking', thinking: 'hm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'Calling.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 }, cache_control: { type: 'ephemeral' } },
        ]),
      ),
    ).toBeUndefined();
  });

  it('accepts unknown block types as they are', () => {
    const body = withBlocks([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'Report' },
      { type: 'search_result', source: 'https://x', title: 't', content: [{ type: 'text', text: 'r' }] },
      { type: 'container_upload', file_id: 'file_1' },
      { type: 'some_future_block', anything: { nested: true } },
      { type: 'image', source: { type: 'file', file_id: 'file_2' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    ]);
    expect(paramOf(body)).toBeUndefined();
    expect(messagesRequestSchema.parse(body)).toEqual(body);
  });

  it('accepts server tool blocks in assistant turns', () => {
    const body = {
      ...base,
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'weather' } },
            { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
          ],
        },
      ],
    };
    expect(paramOf(body)).toBeUndefined();
  });

  it('allows only text blocks in system', () => {
    expect(paramOf({ ...base, system: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }] })).toBeUndefined();
    expect(paramOf({ ...base, system: [{ type: 'image', source: {} }] })).toBe('system[0].type');
    expect(paramOf({ ...base, system: [{ type: 'text' }] })).toBe('system[0].text');
    expect(paramOf({ ...base, system: 3 })).toBe('system');
  });
});

describe('messagesRequestSchema: tools and settings', () => {
  const tool = (name: string) => ({
    name,
    description: `Tool ${name}`,
    input_schema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  });

  it('accepts a dozen custom tools, hosted tools and tool choices', () => {
    const tools = [
      ...Array.from({ length: 12 }, (_, i) => tool(`tool_${i}`)),
      { type: 'custom', ...tool('typed'), strict: true, cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'] },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool', max_characters: 10000 },
      { type: 'code_execution_20250825', name: 'code_execution' },
    ];
    for (const toolChoice of [
      { type: 'auto' },
      { type: 'any', disable_parallel_tool_use: true },
      { type: 'none' },
      { type: 'tool', name: 'tool_3', disable_parallel_tool_use: false },
    ]) {
      expect(paramOf({ ...base, tools, tool_choice: toolChoice })).toBeUndefined();
    }
  });

  it('names the field of a bad custom tool or tool choice', () => {
    expect(paramOf({ ...base, tools: [tool('a'), { name: 'b' }] })).toBe('tools[1].input_schema');
    expect(paramOf({ ...base, tools: [{ description: 'x', input_schema: {} }] })).toBe('tools[0].name');
    expect(paramOf({ ...base, tools: ['nope'] })).toBe('tools[0]');
    expect(paramOf({ ...base, tool_choice: { type: 'tool' } })).toBe('tool_choice.name');
    expect(paramOf({ ...base, tool_choice: { type: 'required' } })).toBe('tool_choice.type');
  });

  it('accepts every thinking setting and bounds the budget', () => {
    expect(paramOf({ ...base, max_tokens: 32000, thinking: { type: 'enabled', budget_tokens: 10000 } })).toBeUndefined();
    expect(paramOf({ ...base, thinking: { type: 'disabled' } })).toBeUndefined();
    expect(paramOf({ ...base, thinking: { type: 'adaptive' } })).toBeUndefined();
    expect(paramOf({ ...base, thinking: { type: 'adaptive', display: 'omitted' } })).toBeUndefined();
    expect(paramOf({ ...base, thinking: { type: 'enabled', budget_tokens: 1000 } })).toBe('thinking.budget_tokens');
    expect(paramOf({ ...base, thinking: { type: 'enabled' } })).toBe('thinking.budget_tokens');
  });

  it('keeps metadata and unknown top-level fields', () => {
    const body = {
      ...base,
      metadata: { user_id: 'user-42' },
      output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
      service_tier: 'auto',
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      some_future_field: { x: 1 },
    };
    expect(messagesRequestSchema.parse(body)).toEqual(body);
  });
});

describe('countTokensRequestSchema', () => {
  it('needs model and messages but not max_tokens', () => {
    const body = { model: 'claude-x', messages: [{ role: 'user', content: 'Hi' }] };
    expect(paramOf(body, countTokensRequestSchema)).toBeUndefined();
    expect(paramOf({ ...body, model: undefined }, countTokensRequestSchema)).toBe('model');
    expect(paramOf({ ...body, messages: [] }, countTokensRequestSchema)).toBe('messages');
    expect(
      paramOf(
        {
          ...body,
          system: 'Be brief.',
          tools: [{ name: 't', input_schema: { type: 'object' } }],
          tool_choice: { type: 'auto' },
          thinking: { type: 'enabled', budget_tokens: 2048 },
          output_config: { effort: 'low' },
        },
        countTokensRequestSchema,
      ),
    ).toBeUndefined();
    expect(paramOf({ ...body, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, countTokensRequestSchema)).toBe(
      'messages[0].content[0].text',
    );
  });
});

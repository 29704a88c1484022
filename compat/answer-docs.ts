import { z } from 'zod';

/**
 * The JSON answers of the routes whose procedures return a typed value the
 * compat layer writes (`answerOf`, so no output schema to read): the outline
 * a reader of /docs needs, lenient to the fields not named here. The types
 * the gateway builds these answers from are in server/providers/*.wire.ts;
 * test/foundation/openapi.test.ts checks real answers against these outlines.
 */

const openAIUsage = z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

export const chatCompletionAnswerDoc = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable(), tool_calls: z.array(z.looseObject({ id: z.string(), type: z.literal('function') })).optional() }),
        finish_reason: z.string().nullable(),
      }),
    ),
    usage: openAIUsage,
  })
  .meta({ description: 'A chat completion; with `stream: true`, `chat.completion.chunk` events instead, ending with `data: [DONE]`.' });

export const messageAnswerDoc = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    stop_sequence: z.string().nullable(),
    usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
  })
  .meta({ description: 'A message; with `stream: true`, named events (`message_start` … `message_stop`) instead.' });

export const responseAnswerDoc = z
  .looseObject({
    id: z.string(),
    object: z.literal('response'),
    created_at: z.number(),
    model: z.string(),
    status: z.string(),
    output: z.array(z.looseObject({ type: z.string() })),
    usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).nullable(),
  })
  .meta({ description: 'A Response; with `stream: true`, `response.*` events instead.' });

export const compactionAnswerDoc = z.looseObject({ id: z.string(), object: z.string(), output: z.array(z.looseObject({ type: z.string() })) });

export const imagesAnswerDoc = z
  .looseObject({ created: z.number().int(), data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional(), revised_prompt: z.string().optional() })) })
  .meta({ description: 'The images, as signed links or base64 by `response_format`; with `stream: true`, partial and completed image events instead.' });

export const embeddingsAnswerDoc = z.looseObject({
  object: z.literal('list'),
  data: z.array(z.looseObject({ object: z.literal('embedding'), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string()]) })),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
});

export const moderationAnswerDoc = z.looseObject({
  id: z.string(),
  model: z.string(),
  results: z.array(z.looseObject({ flagged: z.boolean(), categories: z.record(z.string(), z.boolean()), category_scores: z.record(z.string(), z.number()) })),
});

export const transcriptAnswerDoc = z.looseObject({ text: z.string() }).meta({ description: '`json` (the text) or `verbose_json` (with language, duration and segments), by `response_format`.' });

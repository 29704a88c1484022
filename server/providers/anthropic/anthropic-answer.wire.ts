/**
 * What we read of the Anthropic provider's answers: the message, its usage, error bodies and
 * stream events, lenient (`nullish`, unknown fields and event types ignored). Field names are
 * Anthropic's, exactly. The public request schemas and what we emit are `anthropic.wire.ts`.
 *
 * @see https://platform.claude.com/docs/en/api/messages
 */
import { z } from 'zod';

const count = z.number().nullish();

export const anthropicUsageWireSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  output_tokens_details: z.looseObject({ thinking_tokens: count }).nullish(),
});
export type AnthropicUsageWire = z.infer<typeof anthropicUsageWireSchema>;

/** A content block as the provider returns it; only `type` is required, the rest is read per type. */
export const anthropicResponseBlockWireSchema = z.looseObject({
  type: z.string(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  signature: z.string().nullish(),
  data: z.string().nullish(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  input: z.unknown().optional(),
});

export const anthropicMessageWireSchema = z.looseObject({
  id: z.string(),
  type: z.string().nullish(),
  model: z.string().nullish(),
  content: z.array(anthropicResponseBlockWireSchema),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: anthropicUsageWireSchema.nullish(),
});
export type AnthropicMessageWire = z.infer<typeof anthropicMessageWireSchema>;

export const anthropicErrorWireSchema = z.looseObject({
  type: z.string().nullish(),
  error: z.looseObject({ type: z.string().nullish(), message: z.string().nullish() }).nullish(),
  request_id: z.string().nullish(),
});

/** Stream events as the provider sends them (lenient: unknown fields and event types are ignored). */
export const anthropicStreamEventWireSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('message_start'),
    message: z.looseObject({ id: z.string().nullish(), model: z.string().nullish(), usage: anthropicUsageWireSchema.nullish() }),
  }),
  z.looseObject({ type: z.literal('content_block_start'), index: z.number(), content_block: anthropicResponseBlockWireSchema }),
  z.looseObject({
    type: z.literal('content_block_delta'),
    index: z.number(),
    delta: z.looseObject({
      type: z.string(),
      text: z.string().nullish(),
      thinking: z.string().nullish(),
      signature: z.string().nullish(),
      partial_json: z.string().nullish(),
    }),
  }),
  z.looseObject({ type: z.literal('content_block_stop'), index: z.number() }),
  z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish(), stop_sequence: z.string().nullish() }).nullish(),
    usage: anthropicUsageWireSchema.nullish(),
  }),
  z.looseObject({ type: z.literal('message_stop') }),
  z.looseObject({ type: z.literal('ping') }),
  z.looseObject({
    type: z.literal('error'),
    error: z.looseObject({ type: z.string().nullish(), message: z.string().nullish() }).nullish(),
  }),
]);
export type AnthropicStreamEventWire = z.infer<typeof anthropicStreamEventWireSchema>;

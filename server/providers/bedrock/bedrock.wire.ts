/**
 * Amazon Bedrock Converse and ConverseStream wire formats: the fields the
 * gateway reads, lenient (`nullish`, unknown keys kept) since Bedrock adds
 * fields over time. Field names are Bedrock's own.
 *
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */
import { z } from 'zod';

/** `usage` of a Converse answer or of the stream's `metadata` event. */
export const bedrockUsageWireSchema = z.looseObject({
  inputTokens: z.number().int().nonnegative().nullish(),
  outputTokens: z.number().int().nonnegative().nullish(),
  totalTokens: z.number().int().nonnegative().nullish(),
  cacheReadInputTokens: z.number().int().nonnegative().nullish(),
  cacheWriteInputTokens: z.number().int().nonnegative().nullish(),
});
export type BedrockUsageWire = z.infer<typeof bedrockUsageWireSchema>;

const reasoningContentWireSchema = z.looseObject({
  reasoningText: z.looseObject({ text: z.string().nullish(), signature: z.string().nullish() }).nullish(),
  /** Base64 of the encrypted reasoning. */
  redactedContent: z.string().nullish(),
});

/** One content block of an answer; exactly one member is set. */
export const bedrockContentBlockWireSchema = z.looseObject({
  text: z.string().nullish(),
  toolUse: z.looseObject({ toolUseId: z.string(), name: z.string(), input: z.unknown().optional() }).nullish(),
  reasoningContent: reasoningContentWireSchema.nullish(),
});
export type BedrockContentBlockWire = z.infer<typeof bedrockContentBlockWireSchema>;

/** The Converse answer. */
export const bedrockConverseResponseWireSchema = z.looseObject({
  output: z.looseObject({
    message: z.looseObject({
      role: z.string().nullish(),
      content: z.array(bedrockContentBlockWireSchema),
    }),
  }),
  stopReason: z.string().nullish(),
  usage: bedrockUsageWireSchema.nullish(),
  additionalModelResponseFields: z.record(z.string(), z.unknown()).nullish(),
});
export type BedrockConverseResponseWire = z.infer<typeof bedrockConverseResponseWireSchema>;

/** Converse stop reasons (others may come: they read as a natural stop). */
export type BedrockStopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'model_context_window_exceeded';

/** The payloads of the ConverseStream events, by `:event-type`. */
export const bedrockStreamPayloadSchemas = {
  messageStart: z.looseObject({ role: z.string().nullish() }),
  contentBlockStart: z.looseObject({
    contentBlockIndex: z.number().int().nonnegative(),
    start: z.looseObject({ toolUse: z.looseObject({ toolUseId: z.string(), name: z.string() }).nullish() }).nullish(),
  }),
  contentBlockDelta: z.looseObject({
    contentBlockIndex: z.number().int().nonnegative(),
    delta: z.looseObject({
      text: z.string().nullish(),
      toolUse: z.looseObject({ input: z.string().nullish() }).nullish(),
      reasoningContent: z
        .looseObject({ text: z.string().nullish(), signature: z.string().nullish(), redactedContent: z.string().nullish() })
        .nullish(),
    }),
  }),
  contentBlockStop: z.looseObject({ contentBlockIndex: z.number().int().nonnegative() }),
  messageStop: z.looseObject({ stopReason: z.string().nullish(), additionalModelResponseFields: z.unknown().optional() }),
  metadata: z.looseObject({ usage: bedrockUsageWireSchema.nullish(), metrics: z.unknown().optional() }),
} as const;
export type BedrockStreamEventType = keyof typeof bedrockStreamPayloadSchemas;

/** An error answer's body (`{"message": …}`; some services spell it `Message`). */
export const bedrockErrorWireSchema = z.looseObject({
  message: z.string().nullish(),
  Message: z.string().nullish(),
  __type: z.string().nullish(),
});

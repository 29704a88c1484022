/**
 * The OpenAI Responses wire format, answer side (PROTOCOLS.md §4): TypeScript types for the
 * Response object and its stream events (what we send), and lenient schemas of what we read of
 * a Responses-speaking upstream. The request schemas are `responses.wire.ts`.
 *
 * Field names are OpenAI's, exactly.
 * @see https://platform.openai.com/docs/api-reference/responses/object
 */
import { z } from 'zod';

/** An object whose `type` we do not model; carried as sent. */
export type ResponsesOpaqueObject = { type: string; [key: string]: unknown };

export type ResponsesItemStatus = 'in_progress' | 'completed' | 'incomplete';

export type ResponsesOutputText = {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
};

export type ResponsesOutputMessage = {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ResponsesItemStatus;
  content: ResponsesOutputText[];
};

export type ResponsesOutputFunctionCall = {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ResponsesItemStatus;
};

export type ResponsesSummaryText = { type: 'summary_text'; text: string };

export type ResponsesOutputReasoning = {
  type: 'reasoning';
  id: string;
  summary: ResponsesSummaryText[];
};

export type ResponsesOutputItem =
  | ResponsesOutputMessage
  | ResponsesOutputFunctionCall
  | ResponsesOutputReasoning
  | ResponsesOpaqueObject;

export type ResponsesStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

export type ResponsesUsage = {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
};

/** The Response object (PROTOCOLS.md §4); openai-node computes `output_text` itself. */
export type ResponseObject = {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponsesStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: ResponsesOutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: unknown;
  temperature: number | null;
  text: unknown;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  metadata: Record<string, unknown>;
  usage: ResponsesUsage | null;
};

/** Usage as an upstream sends it; every detail is optional. */
export const responsesUsageWireSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
  input_tokens_details: z
    .looseObject({ cached_tokens: z.number().nullish(), cache_write_tokens: z.number().nullish() })
    .nullish(),
  output_tokens_details: z.looseObject({ reasoning_tokens: z.number().nullish() }).nullish(),
});
export type ResponsesUsageWire = z.output<typeof responsesUsageWireSchema>;

/** A Response object from a Responses-speaking upstream, limited to what we read. */
export const responsesResponseBodySchema = z.looseObject({
  id: z.string().nullish(),
  object: z.string().nullish(),
  model: z.string().nullish(),
  status: z.string().nullish(),
  output: z.array(z.unknown()),
  incomplete_details: z.looseObject({ reason: z.string().nullish() }).nullish(),
  error: z.looseObject({ code: z.string().nullish(), message: z.string().nullish() }).nullish(),
  usage: responsesUsageWireSchema.nullish(),
});

// ---------------------------------------------------------------------------
// Stream events (the ones we emit; an upstream may send more)

type Sequenced = { sequence_number: number };
type AtItem = Sequenced & { item_id: string; output_index: number };

export type ResponsesStreamEvent =
  | (Sequenced & { type: 'response.created' | 'response.in_progress'; response: ResponseObject })
  | (Sequenced & { type: 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponseObject })
  | (Sequenced & { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: ResponsesOutputItem })
  | (AtItem & {
      type: 'response.content_part.added' | 'response.content_part.done';
      content_index: number;
      part: ResponsesOutputText;
    })
  | (AtItem & { type: 'response.output_text.delta'; content_index: number; delta: string; logprobs: unknown[] })
  | (AtItem & { type: 'response.output_text.done'; content_index: number; text: string; logprobs: unknown[] })
  | (AtItem & { type: 'response.function_call_arguments.delta'; delta: string })
  | (AtItem & { type: 'response.function_call_arguments.done'; name: string; arguments: string })
  | (AtItem & {
      type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
      summary_index: number;
      part: ResponsesSummaryText;
    })
  | (AtItem & { type: 'response.reasoning_summary_text.delta'; summary_index: number; delta: string })
  | (AtItem & { type: 'response.reasoning_summary_text.done'; summary_index: number; text: string })
  | (Sequenced & {
      type: 'error';
      code: string | null;
      message: string;
      param: string | null;
      /** The same fields nested, as openai-node v6 and openai-python need to raise (PROTOCOLS.md §4). */
      error: { type: string; code: string | null; message: string; param: string | null };
    });

/** One SSE frame to write: `event:` is the payload's `type`. */
export type ResponsesStreamFrame = { event: ResponsesStreamEvent['type']; data: ResponsesStreamEvent };

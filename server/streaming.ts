/**
 * What a streaming procedure yields: typed SSE events that compat frames, or
 * raw bytes of a same-format upstream passed through untouched.
 */
export type StreamItem =
  | { kind: 'event'; event?: string; data: unknown }
  | { kind: 'raw'; bytes: Uint8Array };

export type StreamResult = AsyncIterable<StreamItem>;

export function isStreamResult(value: unknown): value is StreamResult {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/** A JSON answer already serialised (a provider's body passed through): compat writes the text as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

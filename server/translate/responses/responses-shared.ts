/**
 * Small helpers shared by the Responses translators of both directions.
 */
import type { BridgeReport, CanonicalImageSource, CanonicalReasoning } from '../../providers/canonical.js';

/** Origin of an unknown part holding a whole input item (not a content part). */
export const RESPONSES_ITEM_ORIGIN = 'responses:item';

/** Origin of an unknown content part of the given Responses part type. */
export function responsesPartOrigin(type: string): string {
  return `responses:${type}`;
}

/**
 * Item types the model produces; carried inside the assistant turn when their
 * type is not modelled. Everything else (`*_output`, `item_reference`,
 * approval responses) belongs to the caller's turn.
 */
export function isAssistantSideItemType(type: string): boolean {
  return (
    type.endsWith('_call') ||
    type === 'mcp_list_tools' ||
    type === 'mcp_approval_request' ||
    type === 'compaction'
  );
}

export function addReported(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}

export function reportDropped(report: BridgeReport, name: string): void {
  addReported(report.dropped, name);
}

export function reportApproximated(report: BridgeReport, name: string): void {
  addReported(report.approximated, name);
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,=]+=[^;,]*)*);base64,(.*)$/s;

/** An `image_url` as a canonical source: a base64 `data:` URL is unpacked, anything else is kept as a URL. */
export function imageSourceFromUrl(url: string): CanonicalImageSource {
  const match = DATA_URL.exec(url);
  if (match) return { kind: 'base64', mediaType: match[1], data: match[3] };
  return { kind: 'url', url };
}

export function imageSourceToUrl(source: CanonicalImageSource): string {
  return source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.data}`;
}

type CanonicalEffort = NonNullable<CanonicalReasoning['effort']>;
const CANONICAL_EFFORTS: readonly string[] = ['minimal', 'low', 'medium', 'high'] satisfies CanonicalEffort[];

export function isCanonicalEffort(effort: string): effort is CanonicalEffort {
  return CANONICAL_EFFORTS.includes(effort);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The built-in `mock` provider's chat adapters (its media adapters are in
 * `mock-<operation>.adapter.ts`), like any other kind: it answers
 * in-process, without a transport, so demos and load tests need no provider
 * account.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ClientAbortedError } from '../../errors.js';
import { describeHostedTool, type BridgeReport, type CanonicalRequest, type CanonicalStreamEvent } from '../canonical.js';
import { localCountTokensAdapter } from '../local-count.js';
import type { ChatAdapter, UpstreamTransport } from '../types.js';
import { generateMock, streamMock } from './mock.adapter.js';

let answers = 0;

/** Names only tool calls within one answer (the client-facing id is the gateway's). */
function answerId(): string {
  return `mock_${(++answers).toString(36)}`;
}

/** The mock reads only the canonical fields: everything else the client sent is dropped, and said so. */
export function reportUnusedByMock(request: CanonicalRequest): BridgeReport {
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(request.extra ?? {})) {
    if (key === 'tools' && Array.isArray(value)) dropped.push(...value.map((tool) => `tools.${describeHostedTool(tool)}`));
    else dropped.push(key);
  }
  return { dropped, approximated: [] };
}

async function* paced(events: CanonicalStreamEvent[], transport: UpstreamTransport): AsyncGenerator<CanonicalStreamEvent> {
  for (const event of events) {
    if (transport.signal.aborted) throw new ClientAbortedError();
    yield event;
    // Let other requests and the socket breathe between chunks, as a real provider's stream would.
    await nextTurn();
  }
}

export const mockChatAdapter: ChatAdapter = {
  native: {},
  parseError: () => {
    throw new Error('the mock provider has no HTTP errors');
  },
  prepare(_connection, request) {
    return {
      report: reportUnusedByMock(request),
      complete: async () => generateMock(request, { id: answerId() }),
      stream: async (transport) => paced(streamMock(request, { id: answerId() }), transport),
    };
  },
};

export const mockCountTokensAdapter = localCountTokensAdapter;

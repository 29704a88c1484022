/**
 * OAuth access tokens for Vertex AI from a service-account key, through
 * google-auth-library's JWT client: it signs the assertion, exchanges it,
 * caches the token and fetches a new one before the old one expires
 * (`eagerRefreshThresholdMillis`). One client per key and token endpoint,
 * shared by every request.
 *
 * @see https://developers.google.com/identity/protocols/oauth2/service-account#httprest
 */
import { JWT, gaxios } from 'google-auth-library';
import { UpstreamError } from '../../errors.js';
import type { VertexConnection } from '../types.js';
import { redactGoogleCredentials } from './gemini-errors.js';

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Where the library sends its exchange; a configured `tokenUrl` replaces it. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Tokens live an hour; a new one is fetched this long before expiry, so that no request carries one about to lapse. */
const REFRESH_BEFORE_EXPIRY_MS = 5 * 60 * 1000;
/** Clients kept at most (one per key and endpoint; a catalog rarely has more than a few). */
const MAX_CLIENTS = 64;

const clients = new Map<string, JWT>();
const tokenListeners = new Set<(token: string) => void>();

/**
 * Called with every new access token, so that the gateway masks it in logs
 * as it masks the static secrets. Returns the unsubscribe function.
 */
export function onVertexAccessToken(listener: (token: string) => void): () => void {
  tokenListeners.add(listener);
  return () => tokenListeners.delete(listener);
}

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
}

function readKey(text: string | undefined, providerId: string): ServiceAccountKey {
  let key: unknown;
  try {
    key = text === undefined ? undefined : JSON.parse(text);
  } catch {
    key = undefined;
  }
  const record = key as Partial<ServiceAccountKey> | undefined;
  if (typeof record?.client_email !== 'string' || typeof record.private_key !== 'string') {
    // Never quotes the value: it is a private key.
    throw new UpstreamError('The Vertex AI service account credential is missing or is not a service account key (JSON with client_email and private_key).', {
      status: 502,
      provider: providerId,
      retryable: false,
    });
  }
  return { client_email: record.client_email, private_key: record.private_key };
}

function clientFor(vertex: VertexConnection, providerId: string): JWT {
  const cacheKey = `${vertex.tokenUrl ?? ''}\n${vertex.credentials ?? ''}`;
  const cached = clients.get(cacheKey);
  if (cached) return cached;
  const key = readKey(vertex.credentials, providerId);
  const transporter = new gaxios.Gaxios();
  if (vertex.tokenUrl) {
    const tokenUrl = vertex.tokenUrl;
    transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(tokenUrl);
        return options;
      },
    });
  }
  const client = new JWT({ email: key.client_email, key: key.private_key, scopes: [SCOPE], eagerRefreshThresholdMillis: REFRESH_BEFORE_EXPIRY_MS, transporter });
  client.on('tokens', (tokens) => {
    if (tokens.access_token) for (const listener of tokenListeners) listener(tokens.access_token);
  });
  if (clients.size >= MAX_CLIENTS) clients.delete(clients.keys().next().value!);
  clients.set(cacheKey, client);
  return client;
}

/**
 * A valid access token for the provider's service account: the cached one,
 * or a new one when it is near expiry. A failed exchange is a retryable 503
 * (the next deployment is tried); its message never carries the key.
 */
export async function vertexAccessToken(vertex: VertexConnection, providerId: string): Promise<string> {
  const client = clientFor(vertex, providerId);
  let token: string | null | undefined;
  try {
    token = (await client.getAccessToken()).token;
  } catch (error) {
    const reason = redactGoogleCredentials(String((error as Error)?.message ?? error)).slice(0, 300);
    throw new UpstreamError(`Vertex AI access token exchange failed: ${reason}`, { status: 503, provider: providerId, retryable: true });
  }
  if (!token) throw new UpstreamError('Vertex AI access token exchange answered no token.', { status: 503, provider: providerId, retryable: true });
  return token;
}

/**
 * Plain `fetch` against a running gateway, for the suites that look at the
 * wire itself (status, headers, the exact body) rather than through an SDK.
 */

export type Json = Record<string, unknown>;

/** An answer read whole: status, headers, the body parsed as JSON (empty when it is not JSON) and as text. */
export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

export async function toAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    // Not JSON: the assertions on `body` will say so.
  }
  return { status: response.status, headers: response.headers, body, text };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return toAnswer(await fetch(url, { headers }));
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return toAnswer(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }));
}

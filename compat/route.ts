import type { AppCaller } from '../routers/_app.js';
import type { Answer } from '../server/answers.js';
import type { AuthContext } from '../server/auth/authenticate.js';
import type { ErrorFamily } from './error-body.js';
import type { MultipartBody, MultipartSpec } from './read-multipart.js';
import type { z } from 'zod';

/**
 * What the OpenAPI document cannot read from the procedure's own schemas:
 * the body as the client sends it when it differs from the procedure's input
 * (a multipart form, whose files reach the procedure as upload ids), and the
 * 200 answer when the procedure's output is a typed value the compat layer
 * writes (`answerOf`): its JSON schema, or its content by type (bytes, text).
 */
export interface RouteDocs {
  form?: z.ZodType;
  answer?: z.ZodType;
  answers?: Record<string, { schema?: object }>;
}

export interface RouteInput {
  /** The JSON object body (`{}` for routes without one). */
  body: Record<string, unknown>;
  params: Record<string, string>;
  query: Record<string, string>;
  /** The form of a multipart route (text fields, and files already on disk). */
  form: MultipartBody;
}

/** One public route: where it lives, what it reads, which procedure serves it, how its errors look. */
export interface CompatRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The error shape of the route (GAPS.md: the messages family answers in Anthropic's). */
  family: ErrorFamily;
  /** `multipart-or-json`: a JSON body when the content type says so, else a multipart form. */
  body: 'json' | 'multipart' | 'multipart-or-json' | 'none';
  /** The files a multipart route accepts, with their bounds. */
  multipart?: MultipartSpec;
  /** `key`: the API key, account and rate limit are checked from the headers before the body is read. */
  auth: 'key' | 'none';
  /**
   * `key` routes: what the account must be allowed, checked right after the
   * key and before the body is read (throws, e.g. 403 PLAN_RESTRICTED). The
   * procedure checks it again for callers that do not come through compat.
   */
  guard?: (auth: AuthContext) => void;
  /** The answer can be server-sent events (by the request's `stream` flag), for the OpenAPI document. */
  streams?: true;
  summary: string;
  /** The procedure `invoke` calls, by its dotted path: the OpenAPI document reads its input and output schemas. */
  procedure: string;
  docs?: RouteDocs;
  invoke(caller: AppCaller, input: RouteInput): Promise<Answer>;
}

/**
 * A request body or query as the procedure's input. The procedure's own zod
 * schema checks it before anything else runs; compat only claims its type,
 * here and nowhere else.
 */
export function checkedByProcedure<Input>(value: Record<string, unknown>): Input {
  return value as Input;
}

/** The text fields of a form, each once (the last value when a field repeats). */
export function formFields(form: MultipartBody): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(form.fields)) fields[name] = Array.isArray(value) ? value[value.length - 1]! : value;
  return fields;
}

/** The ids of the files of a form field (and of its `name[]` spelling). */
export function formFileIds(form: MultipartBody, name: string): string[] {
  return [...(form.files[name] ?? []), ...(form.files[`${name}[]`] ?? [])].map((file) => file.id);
}

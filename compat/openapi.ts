import { z } from 'zod';
import { appRouter } from '../routers/_app.js';
import { ERROR_TABLE, type GatewayErrorCode } from '../server/errors.js';
import { anthropicErrorBodySchema, openAIErrorBodySchema } from './error-body.js';
import { ROUTES, type CompatRoute } from './routes.js';

/** An OpenAPI 3.1 document, as plain JSON. */
export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { securitySchemes: Record<string, object>; schemas: Record<string, JsonSchema> };
};
type JsonSchema = Record<string, unknown>;
type OpenApiOperation = Record<string, unknown>;

interface ProcedureDef {
  inputs: z.ZodType[];
  output?: z.ZodType;
}

/** Codes of the admin and dashboard surfaces, never answered on /v1. */
const NOT_ON_V1 = new Set<GatewayErrorCode>(['UNAUTHORIZED_ADMIN', 'INVALID_CREDENTIALS', 'SESSION_REQUIRED', 'CSRF_REJECTED']);
/** Statuses that only a keyed route answers (the key, the account's credits and standing). */
const KEY_ONLY_STATUSES = new Set([401, 402, 403, 429]);

/** `/v1/videos/:id` → `/v1/videos/{id}`. */
export function toOpenApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}').replace(/\{\*(\w+)\}|\*(\w+)/g, '{$1$2}');
}

/**
 * The OpenAPI document of the /v1 surface, derived in one pass from the
 * route table compat serves (ROUTES): each row's path, method, body kind,
 * auth and error family, and the zod input and output schemas of the
 * procedure it calls (zod's own JSON Schema export). A row's `docs` adds
 * what a procedure's schemas cannot say (the multipart form as sent, the
 * answer of a procedure whose output is a value compat writes).
 */
export function buildOpenApiDocument(routes: readonly CompatRoute[] = ROUTES): OpenApiDocument {
  const components = new SchemaComponents();
  const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: ProcedureDef }> }).procedures;
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Set<string>();
  const errorRefs = {
    openai: components.add('OpenAIError', openAIErrorBodySchema, 'output'),
    anthropic: components.add('AnthropicError', anthropicErrorBodySchema, 'output'),
  };

  for (const route of routes) {
    const procedure = procedures[route.procedure];
    if (!procedure) throw new Error(`Route ${route.method} ${route.path} names the procedure '${route.procedure}', which the app router does not have.`);
    const input = procedure._def.inputs[0];
    const output = procedure._def.output;
    const tag = route.procedure.split('.')[0]!;
    tags.add(tag);

    const pathNames = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]!);
    const inputShape = input instanceof z.ZodObject ? (input.shape as Record<string, z.ZodType>) : {};
    const parameters: object[] = pathNames.map((name) => ({ name, in: 'path', required: true, schema: components.inline(inputShape[name] ?? z.string(), 'input') }));
    if (route.body === 'none') {
      for (const [name, schema] of Object.entries(inputShape)) {
        if (pathNames.includes(name)) continue;
        parameters.push({ name, in: 'query', required: !schema.safeParse(undefined).success, schema: components.inline(schema, 'input') });
      }
    }
    if (route.family === 'anthropic') {
      parameters.push(
        { name: 'anthropic-version', in: 'header', required: false, schema: { type: 'string', examples: ['2023-06-01'] } },
        { name: 'anthropic-beta', in: 'header', required: false, description: 'Forwarded to an Anthropic upstream.', schema: { type: 'string' } },
      );
    }

    const operation: OpenApiOperation = {
      operationId: route.procedure,
      summary: route.summary,
      tags: [tag],
      security: route.auth === 'key' ? [{ bearer: [] }, { apiKey: [] }] : [],
      ...(parameters.length ? { parameters } : {}),
    };
    if (route.body !== 'none' && input) {
      const json = { schema: components.inline(input, 'input') };
      const form = { schema: components.inline(route.docs?.form ?? input, 'input') };
      const content =
        route.body === 'json' ? { 'application/json': json } : route.body === 'multipart' ? { 'multipart/form-data': form } : { 'application/json': json, 'multipart/form-data': form };
      operation.requestBody = { required: true, content };
    }
    operation.responses = {
      200: { description: 'OK', content: answerContent(route, output, components) },
      ...errorResponses(route, errorRefs[route.family]),
    };
    (paths[toOpenApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Unified Model Gateway',
      version: '2026-10-01',
      description:
        'OpenAI- and Anthropic-compatible model APIs behind one key. Send the key as `Authorization: Bearer sk-umg-…` or `x-api-key: sk-umg-…`. Errors come in the route family\'s shape: OpenAI\'s `{ error: { message, type, param, code } }`, or Anthropic\'s `{ type: "error", error: { type, message } }` on `/v1/messages`.',
    },
    servers: [{ url: '/' }],
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'The API key as a bearer token.' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key in the header Anthropic clients use.' },
      },
      schemas: components.schemas,
    },
  };
}

/** The 200 content: the procedure's output schema, else the row's documented answer; SSE beside it when the route streams. */
function answerContent(route: CompatRoute, output: z.ZodType | undefined, components: SchemaComponents): Record<string, object> {
  const declared = output && !(output instanceof z.ZodCustom) ? output : route.docs?.answer;
  const content: Record<string, object> = { ...(route.docs?.answers ?? { 'application/json': {} }) };
  if (declared && content['application/json']) content['application/json'] = { schema: components.inline(declared, 'output') };
  if (route.streams) content['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events, when the request sets `stream: true`.' } };
  return content;
}

/** One response per error status the route can answer, its codes named from the error table. */
function errorResponses(route: CompatRoute, errorRef: object): Record<string, object> {
  const byStatus = new Map<number, string[]>();
  for (const [code, { status }] of Object.entries(ERROR_TABLE) as [GatewayErrorCode, { status: number }][]) {
    if (NOT_ON_V1.has(code) || (route.auth === 'none' && KEY_ONLY_STATUSES.has(status))) continue;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, object> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = { description: codes.join(', '), content: { 'application/json': { schema: errorRef } } };
  }
  return responses;
}

/**
 * JSON Schemas from zod, gathered into `components.schemas`: a schema's own
 * `$defs` (recursive or shared parts) become components, since a `#/$defs/…`
 * reference inside an OpenAPI document would resolve against the document.
 */
class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  #count = 0;

  add(name: string, schema: z.ZodType, io: 'input' | 'output'): object {
    this.schemas[name] = this.inline(schema, io);
    return { $ref: `#/components/schemas/${name}` };
  }

  inline(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const { $schema: _dialect, $defs, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any', reused: 'inline', cycles: 'ref' }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    if (!$defs) return json;
    const prefix = `Schema${++this.#count}_`;
    const rename = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rename);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [key, key === '$ref' && typeof inner === 'string' ? inner.replace('#/$defs/', `#/components/schemas/${prefix}`) : rename(inner)]),
      );
    };
    for (const [name, definition] of Object.entries($defs)) this.schemas[`${prefix}${name}`] = rename(definition) as JsonSchema;
    return rename(json) as JsonSchema;
  }
}

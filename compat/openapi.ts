import { generateOpenApiDocument } from 'trpc-to-openapi';
import { z } from 'zod';
import { appRouter } from '../routers/_app.js';
import { ROUTES } from './routes.js';
import { ROUTE_DOCS } from './route-docs.js';

type OpenApiDocument = ReturnType<typeof generateOpenApiDocument>;

/**
 * The OpenAPI document: trpc-to-openapi for the procedures with plain JSON
 * inputs and outputs, completed here for the routes it cannot describe
 * (answers that are JSON or SSE by the request's `stream` flag).
 */
export function buildOpenApiDocument(): OpenApiDocument {
  const document = generateOpenApiDocument(appRouter, {
    title: 'Unified Model Gateway',
    version: '2026-10-01',
    baseUrl: '/',
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    },
  });
  const paths = (document.paths ??= {}) as Record<string, Record<string, unknown>>;
  for (const route of ROUTES) {
    const path = route.path.replace(/:(\w+)/g, '{$1}').replace(/\{\*(\w+)\}|\*(\w+)/g, '{$1$2}');
    const method = route.method.toLowerCase();
    if (paths[path]?.[method]) continue;
    const docs = ROUTE_DOCS[`${route.method} ${route.path}`];
    const operation: Record<string, unknown> = {
      summary: route.summary,
      security: [{ bearer: [] }, { apiKey: [] }],
      responses: {
        200: {
          description: 'OK',
          content: {
            ...(docs?.output ? { 'application/json': { schema: z.toJSONSchema(docs.output, { unrepresentable: 'any', io: 'output' }) } } : { 'application/json': {} }),
            ...(route.streams ? { 'text/event-stream': { schema: { type: 'string' } } } : {}),
          },
        },
      },
    };
    if (docs?.input) {
      operation.requestBody = {
        required: true,
        content: { [route.body === 'multipart' ? 'multipart/form-data' : 'application/json']: { schema: z.toJSONSchema(docs.input, { unrepresentable: 'any', io: 'input' }) } },
      };
    }
    (paths[path] ??= {})[method] = operation;
  }
  return document;
}

import type { z } from 'zod';

/** Schemas of the routes whose procedures cannot carry an output schema (JSON or SSE answers). */
export const ROUTE_DOCS: Record<string, { input?: z.ZodType; output?: z.ZodType }> = {};

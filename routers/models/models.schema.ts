import { z } from 'zod';

export const modelSchema = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
});

export const modelListSchema = z.object({ object: z.literal('list'), data: z.array(modelSchema) });

export const getModelInputSchema = z.object({ id: z.string().min(1) });

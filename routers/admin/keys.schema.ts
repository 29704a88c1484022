import { z } from 'zod';

export const createKeyInputSchema = z.object({
  account_id: z.string().min(1),
  name: z.string().min(1).max(200).default('default'),
});
export const listKeysInputSchema = z.object({ account_id: z.string().min(1), include_deleted: z.boolean().default(false) });
export const keyIdInputSchema = z.object({ key_id: z.string().min(1) });
export const renameKeyInputSchema = z.object({ key_id: z.string().min(1), name: z.string().min(1).max(200) });

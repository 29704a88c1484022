import { z } from 'zod';

/** Views that both the admin API and the dashboard answer with. */

export const keyViewSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  name: z.string(),
  display: z.string(),
  enabled: z.boolean(),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  deleted_at: z.string().nullable(),
});

export const userViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(['owner', 'member', 'staff']),
  account_id: z.string().nullable(),
  created_at: z.string(),
});

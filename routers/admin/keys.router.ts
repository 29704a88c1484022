import { z } from 'zod';
import { createKey, listKeys, requireAccount, toKeyView, updateKey } from '../../server/accounts/accounts.service.js';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { keyViewSchema } from '../shared/views.schema.js';
import { createKeyInputSchema, keyIdInputSchema, listKeysInputSchema, renameKeyInputSchema } from './keys.schema.js';

export const keysRouter = router({
  /** The answer's `key` is the only time the full key is shown. */
  create: adminProcedure
    .input(createKeyInputSchema)
    .output(keyViewSchema.extend({ key: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { key, record } = await createKey(ctx.services.db, input.account_id, input.name);
      return { ...toKeyView(record), key };
    }),
  list: adminProcedure
    .input(listKeysInputSchema)
    .output(z.array(keyViewSchema))
    .query(async ({ ctx, input }) => {
      await requireAccount(ctx.services.db, input.account_id);
      return (await listKeys(ctx.services.db, input.account_id, input.include_deleted)).map(toKeyView);
    }),
  rename: adminProcedure
    .input(renameKeyInputSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, input.key_id, { name: input.name }))),
  enable: adminProcedure
    .input(keyIdInputSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, input.key_id, { enabled: true }))),
  disable: adminProcedure
    .input(keyIdInputSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, input.key_id, { enabled: false }))),
  delete: adminProcedure
    .input(keyIdInputSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, input.key_id, { deleted: true }))),
});

import { z } from 'zod';
import { reloadCatalog } from '../../server/catalog-reload.js';
import { CatalogConfigError } from '../../server/catalog/catalog.js';
import { GatewayError } from '../../server/errors.js';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';

const reloadOutputSchema = z.object({
  file: z.string(),
  models: z.number().int(),
  providers: z.number().int(),
  added: z.array(z.string()),
  removed: z.array(z.string()),
  changed: z.array(z.string()),
  unset_secrets: z.array(z.object({ provider: z.string(), variable: z.string() })),
  note: z.string(),
});

export const catalogRouter = router({
  /**
   * Reads GATEWAY_CONFIG again: when valid, it becomes the catalog of every
   * instance on the database (this one before answering, the others within a
   * second); when not, nothing changes and the error says why.
   */
  reload: adminProcedure.output(reloadOutputSchema).mutation(async ({ ctx }) => {
    try {
      const result = await reloadCatalog(ctx.services, 'admin');
      return {
        file: result.file,
        models: result.models,
        providers: result.providers,
        added: result.added,
        removed: result.removed,
        changed: result.changed,
        unset_secrets: result.unsetSecrets,
        note: 'This instance serves the new catalog; the other instances on the database follow within a second. Requests already under way finish on the catalog they started with.',
      };
    } catch (error) {
      if (error instanceof CatalogConfigError) throw new GatewayError('INVALID_REQUEST', `The catalog was not reloaded (the running one stays): ${error.message}`, { cause: error });
      throw error;
    }
  }),
});

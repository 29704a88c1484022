import { GatewayError } from '../../server/errors.js';
import { publicProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { getModelInputSchema, modelListSchema, modelSchema } from './models.schema.js';

/** The public catalog: no key, never filtered by account (SPEC "Models"). */
export const modelsRouter = router({
  list: publicProcedure
    .output(modelListSchema)
    .query(({ ctx }) => ({ object: 'list' as const, data: ctx.services.catalog.list().map((model) => model.publicJson) })),

  get: publicProcedure
    .input(getModelInputSchema)
    .output(modelSchema)
    .query(({ ctx, input }) => {
      const model = ctx.services.catalog.get(input.id);
      if (!model) throw new GatewayError('MODEL_NOT_FOUND', `The model '${input.id}' does not exist.`, { param: 'model' });
      return model.publicJson;
    }),
});

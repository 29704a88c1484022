import { z } from 'zod';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';

const deploymentHealthSchema = z.object({
  model: z.string(),
  provider: z.string(),
  state: z.enum(['healthy', 'cooling', 'half-open']),
  recentFailures: z.number().int(),
  coolingUntil: z.string().nullable(),
  cooldowns: z.number().int(),
  lastError: z.string().nullable(),
});

export const providersRouter = router({
  /** This instance's view of its deployments: those that failed since start, and whether they are cooled down. */
  health: adminProcedure
    .output(z.object({ instanceId: z.string(), failures: z.number().int(), windowMs: z.number().int(), cooldownMs: z.number().int(), deployments: z.array(deploymentHealthSchema) }))
    .query(({ ctx }) => {
      const health = ctx.services.providerHealth;
      return { instanceId: ctx.services.instanceId, ...health.config, deployments: health.snapshot() };
    }),
});

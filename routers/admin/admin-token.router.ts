import { z } from 'zod';
import { rotateAdminToken } from '../../server/admin-token.js';
import { GatewayError } from '../../server/errors.js';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';

export const adminTokenRouter = router({
  /**
   * A new admin token for the whole fleet: every instance on the database
   * takes it at once, and the old one stops working. Shown only in this answer.
   */
  rotate: adminProcedure.output(z.object({ admin_token: z.string(), note: z.string() })).mutation(async ({ ctx }) => {
    if (ctx.services.config.adminToken) {
      // The next start of this instance would set the variable's token back for every instance.
      throw new GatewayError(
        'INVALID_REQUEST',
        'This gateway takes its admin token from GATEWAY_ADMIN_TOKEN: rotate by changing that variable on every instance (the first one restarted sets it for all).',
      );
    }
    const token = await rotateAdminToken(ctx.services.db);
    return {
      admin_token: token,
      note: 'Shown once. Every instance on this database now checks this token; the old one and any DATA_DIR/admin-token file holding it no longer work.',
    };
  }),
});

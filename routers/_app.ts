import { createCallerFactory, router } from '../server/trpc.js';
import { accountsRouter } from './admin/accounts.router.js';
import { keysRouter } from './admin/keys.router.js';
import { billingRouter } from './admin/billing.router.js';
import { modelsRouter } from './models/models.router.js';
import { chatRouter } from './chat/chat.router.js';
import { messagesRouter } from './messages/messages.router.js';
import { responsesRouter } from './responses/responses.router.js';
import { imagesRouter } from './images/images.router.js';
import { accountRouter } from './account/account.router.js';
import { audioRouter } from './audio/audio.router.js';
import { videosRouter } from './videos/videos.router.js';
import { embeddingsRouter } from './embeddings/embeddings.router.js';
import { moderationsRouter } from './moderations/moderations.router.js';
import { restrictedAdminRouter } from './admin/restricted/restricted.router.js';
import { usersRouter } from './admin/users.router.js';
import { dashboardAuthRouter } from './dashboard/auth.router.js';
import { dashboardOwnerRouter } from './dashboard/owner.router.js';
import { providersRouter } from './admin/providers.router.js';
import { adminTokenRouter } from './admin/admin-token.router.js';
import { catalogRouter } from './admin/catalog.router.js';

export const appRouter = router({
  models: modelsRouter,
  chat: chatRouter,
  messages: messagesRouter,
  responses: responsesRouter,
  images: imagesRouter,
  audio: audioRouter,
  videos: videosRouter,
  account: accountRouter,
  embeddings: embeddingsRouter,
  moderations: moderationsRouter,
  admin: router({
    accounts: accountsRouter,
    keys: keysRouter,
    billing: billingRouter,
    restricted: restrictedAdminRouter,
    users: usersRouter,
    providers: providersRouter,
    adminToken: adminTokenRouter,
    catalog: catalogRouter,
  }),
  /** The dashboard's own procedures (session cookie; see server/dashboard). */
  dashboard: router({
    auth: dashboardAuthRouter,
    account: dashboardOwnerRouter,
  }),
});

export type AppRouter = typeof appRouter;

/** Built once; `createCaller(ctx)` per request is a cheap proxy. */
export const createCaller = createCallerFactory(appRouter);
export type AppCaller = ReturnType<typeof createCaller>;

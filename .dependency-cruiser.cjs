/**
 * Import rules of the gateway, checked by `npm run depcheck` (ops/check-dependencies.ts, which
 * also refuses folder cycles). Type-only imports count like any other: a cycle of types is
 * still a cycle of knowledge.
 *
 * The layers, each importing only from those before it:
 *   leaves (db/, errors, config, logger, sse, media, classifier, endpoints, billing/money, …)
 *   ← providers (server/providers, server/translate)
 *   ← catalog
 *   ← shared parts (billing, auth, ratelimit, restricted, upstream, observability)
 *   ← operations (server/generation, server/operations)
 *   ← domain services (images, audio, embeddings, moderation, videos, accounts, dashboard)
 *   ← composition (services, context, trpc, procedures, bootstrap)
 *   ← routers ← compat ← the process (gateway.ts, main.ts, cli/)
 */
const PROVIDERS = '^server/(providers|translate)/';
const CATALOG = '^server/catalog/';
// billing/money.ts (micro-credit arithmetic) is a leaf the catalog prices with.
const SHARED = '^server/(billing/(?!money\\.ts$)|auth/|ratelimit/|restricted/|upstream/|observability/)';
const OPERATIONS = '^server/(generation|operations)/';
const DOMAIN = '^server/(images|audio|embeddings|moderation|videos|accounts|dashboard)/';
const COMPOSITION = ['^server/(services|context|trpc|bootstrap|catalog-reload)\\.ts$', '^server/procedures/'];
const ROUTERS = '^routers/';
const COMPAT = '^compat/';
const PROCESS = ['^server/(gateway|main)\\.ts$', '^server/cli/'];

const above = {
  providers: [CATALOG, SHARED, OPERATIONS, DOMAIN, ...COMPOSITION, ROUTERS, COMPAT, ...PROCESS],
  catalog: [SHARED, OPERATIONS, DOMAIN, ...COMPOSITION, ROUTERS, COMPAT, ...PROCESS],
  shared: [OPERATIONS, DOMAIN, ...COMPOSITION, ROUTERS, COMPAT, ...PROCESS],
  operations: [DOMAIN, ...COMPOSITION, ROUTERS, COMPAT, ...PROCESS],
  domain: [...COMPOSITION, ROUTERS, COMPAT, ...PROCESS],
  composition: [ROUTERS, COMPAT, ...PROCESS],
  routers: [COMPAT, ...PROCESS],
  compat: [...PROCESS],
};

function layer(name, from) {
  return {
    name: `${name}-imports-downward`,
    severity: 'error',
    comment: `${name} imports only from the layers below it (see the top of .dependency-cruiser.cjs).`,
    from: { path: from },
    to: { path: above[name] },
  };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files must not import each other in a loop, at run time or type-only: move the shared declaration to a leaf module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'leaves-import-leaves',
      severity: 'error',
      comment: 'db/ and the leaf modules of server/ import nothing of the layers above them.',
      from: { path: ['^db/', '^server/(sse|media|classifier|uploads|workers)/', '^server/(answers|config|endpoints|errors|ids|key-format|logger|project-root|scratch-folders|text-hash|tokenizer|validation)\\.ts$', '^server/billing/money\\.ts$'] },
      to: { path: [PROVIDERS, ...above.providers] },
    },
    layer('providers', PROVIDERS),
    layer('catalog', CATALOG),
    layer('shared', SHARED),
    layer('operations', OPERATIONS),
    layer('domain', DOMAIN),
    layer('composition', COMPOSITION),
    layer('routers', ROUTERS),
    layer('compat', COMPAT),
    {
      name: 'no-service-locator',
      severity: 'error',
      comment: 'Modules take the narrow dependencies they use; only the composition and the process see the whole Services.',
      from: { path: '^server/', pathNot: [...COMPOSITION, ...PROCESS] },
      to: { path: '^server/services\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.test\\.ts$', '(^|/)__fixtures__/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};

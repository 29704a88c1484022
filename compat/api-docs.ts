import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Koa from 'koa';
import { SECURITY_HEADERS } from './dashboard-static.js';

/**
 * The API reference at /docs: Swagger UI (the `swagger-ui-dist` package, served
 * from node_modules by this process, never from a CDN) rendering /openapi.json,
 * under the dashboard's content-security policy. The page and its start script
 * are ours; the script is a file because the policy allows no inline script.
 */

const SWAGGER_DIST = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
/** The only files of the package the page uses. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Unified Model Gateway — API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/start.js"></script>
</body>
</html>
`;

// No validator badge: Swagger UI would send the document to an outside validator.
const START = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
});
`;

export async function serveApiDocs(ctx: Koa.Context): Promise<void> {
  ctx.set(SECURITY_HEADERS);
  const relative = ctx.path.replace(/^\/docs\/?/, '');
  if (relative === '') {
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
    return;
  }
  if (relative === 'assets/start.js') {
    ctx.set('cache-control', 'no-cache');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = START;
    return;
  }
  const name = relative.startsWith('assets/') ? relative.slice('assets/'.length) : '';
  const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  const info = type ? await stat(path.join(SWAGGER_DIST, name)).catch(() => undefined) : undefined;
  if (!type || !info?.isFile()) {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.body = 'Not found';
    return;
  }
  // The package's version is in no file name: an hour, then the browser asks again.
  ctx.set('cache-control', 'public, max-age=3600');
  ctx.type = type;
  ctx.length = info.size;
  ctx.body = createReadStream(path.join(SWAGGER_DIST, name));
}

import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type Koa from 'koa';
import { DASHBOARD_DIST } from '../server/dashboard/bundle.js';

/**
 * Serves the built dashboard (dashboard/dist) under /dashboard: hashed
 * assets for a year (their names change with their content), the page
 * itself never from a cache, and the page for every other path below
 * /dashboard so the browser's own routes work on reload (SPA fallback).
 */

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
};

/** Nothing from elsewhere: scripts, styles and fetches from this origin only; no framing. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

export async function serveDashboard(ctx: Koa.Context, distDir = DASHBOARD_DIST): Promise<void> {
  ctx.set(SECURITY_HEADERS);
  const relative = decodeURIComponent(ctx.path.slice('/dashboard'.length)).replace(/^\/+/, '');
  const file = path.resolve(distDir, relative);
  const inside = file.startsWith(distDir + path.sep);
  if (relative.startsWith('assets/')) {
    // Never a file outside the bundle, whatever the path's dots and encoded slashes say.
    const info = inside ? await stat(file).catch(() => undefined) : undefined;
    if (!info?.isFile()) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found';
      return;
    }
    ctx.set('cache-control', 'public, max-age=31536000, immutable');
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.length = info.size;
    ctx.body = createReadStream(file);
    return;
  }
  const page = await readFile(path.join(distDir, 'index.html')).catch(() => undefined);
  ctx.set('cache-control', 'no-cache');
  if (!page) {
    ctx.status = 503;
    ctx.type = 'text/plain';
    ctx.body = 'The dashboard is not built yet: run `npm run build:dashboard` (npm start builds it when missing).';
    return;
  }
  ctx.type = TYPES['.html']!;
  ctx.body = page;
}

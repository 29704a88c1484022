import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The checkout's root folder (the one with our package.json), found by walking
 * up from this file: the same answer whether the gateway runs from its
 * TypeScript sources (server/) or from the compiled build (dist/server/), so
 * files read at run time (the dashboard bundle) are found in either case.
 */
function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'unified-model-gateway') return dir;
    if (path.dirname(dir) === dir) throw new Error(`No unified-model-gateway package.json above ${start}.`);
  }
}

export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

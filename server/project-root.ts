/**
 * The project's root: the nearest folder above this module that holds `package.json`. Data
 * files that ship beside the source (the classifier's lexicon, …) are found from it, so that
 * the same code reads them whether it runs from `server/` through tsx or from a compiled copy
 * in another folder (`dist/server/…`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `start` that holds `package.json`. */
export function findProjectRoot(start: string): string {
  let folder = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(folder, 'package.json'))) return folder;
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error(`no package.json in ${start} or any folder above it`);
    folder = parent;
  }
}

export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the project, from its root (`projectPath('server', 'classifier', 'classifier-lexicon.json')`). */
export function projectPath(...segments: string[]): string {
  return path.join(PROJECT_ROOT, ...segments);
}

/**
 * The project's root: the folder of our own package.json, found by walking up from this
 * module. Files that ship beside the source and are read at run time (the dashboard bundle,
 * the classifier's lexicon) are found from it, so the same code reads them whether it runs
 * from its TypeScript sources (`server/`) or from the compiled build (`dist/server/`, where a
 * package.json of the build's own may sit in between).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'unified-model-gateway';

/** The nearest folder at or above `start` whose package.json is this project's. */
export function findProjectRoot(start: string): string {
  for (let folder = path.resolve(start); ; folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === PACKAGE_NAME) return folder;
    if (path.dirname(folder) === folder) throw new Error(`no ${PACKAGE_NAME} package.json in ${start} or any folder above it`);
  }
}

export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the project, from its root (`projectPath('server', 'classifier', 'classifier-lexicon.json')`). */
export function projectPath(...segments: string[]): string {
  return path.join(PROJECT_ROOT, ...segments);
}

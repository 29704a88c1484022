/**
 * The Chromium the browser tests drive. `npm ci` brings one as a
 * devDependency: @sparticuz/chromium ships a brotli-compressed headless
 * Chromium in its tarball, unpacked here once into node_modules/.cache (no
 * download, nothing from the system package manager). CHROMIUM_PATH names
 * another binary; where the package is missing (another platform), Debian's
 * /usr/bin/chromium is used.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** The package's root directory, or undefined when it is not installed. */
function packageRoot(): string | undefined {
  try {
    // The package exports only its entry point (build/cjs/index.cjs); its root is two levels up.
    return path.resolve(path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '../..');
  } catch {
    return undefined;
  }
}

/**
 * Unpacks the packaged Chromium once per package version. Test files run in
 * parallel processes: each writes a file of its own and renames it into
 * place, so a reader never sees a half-written binary.
 */
function unpackPackagedChromium(root: string): string | undefined {
  const compressed = path.join(root, 'bin', 'chromium.br');
  if (!existsSync(compressed)) return undefined;
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const directory = path.resolve('node_modules', '.cache', 'umg-chromium', version);
  const binary = path.join(directory, 'chromium');
  if (existsSync(binary)) return binary;
  mkdirSync(directory, { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  try {
    writeFileSync(partial, brotliDecompressSync(readFileSync(compressed)), { mode: 0o755 });
    renameSync(partial, binary);
  } finally {
    rmSync(partial, { force: true });
  }
  return binary;
}

let resolved: { path: string; source: string } | undefined;

/** Which Chromium the browser tests launch, and where it came from (for failure messages and the README's claim). */
export function chromiumExecutable(): { path: string; source: string } {
  if (resolved) return resolved;
  if (process.env.CHROMIUM_PATH) return (resolved = { path: process.env.CHROMIUM_PATH, source: 'CHROMIUM_PATH' });
  const root = packageRoot();
  const packaged = root ? unpackPackagedChromium(root) : undefined;
  resolved = packaged ? { path: packaged, source: '@sparticuz/chromium' } : { path: SYSTEM_CHROMIUM, source: 'the system' };
  return resolved;
}

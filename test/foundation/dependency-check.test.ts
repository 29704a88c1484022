import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDependencies, folderOf } from '../../ops/check-dependencies.js';

const PROJECT = path.resolve(import.meta.dirname, '../..');

/** A small project checked by the gateway's own dependency rules. */
function fixture(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'depcheck-'));
  copyFileSync(path.join(PROJECT, '.dependency-cruiser.cjs'), path.join(root, '.dependency-cruiser.cjs'));
  writeFileSync(
    path.join(root, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, verbatimModuleSyntax: true, noEmit: true }, include: ['server'] }),
  );
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describe('npm run depcheck', () => {
  let cyclic: ReturnType<typeof checkDependencies>;
  let clean: ReturnType<typeof checkDependencies>;
  let withKnown: ReturnType<typeof checkDependencies>;

  beforeAll(() => {
    const cyclicRoot = fixture({
      // A file cycle made of a type-only import.
      'server/one/a.ts': "import { b } from './b.js';\nexport interface A { value: number }\nexport const a = b + 1;\n",
      'server/one/b.ts': "import type { A } from './a.js';\nexport const b = 1;\nexport type B = A;\n",
      // A folder cycle without a file cycle: two → three → four → two.
      'server/two/x.ts': "import { y } from '../three/y.js';\nexport const x = y;\n",
      'server/three/y.ts': "import { z } from '../four/z.js';\nexport const y = z;\n",
      'server/four/z.ts': "import { w } from '../two/w.js';\nexport const z = w;\n",
      'server/two/w.ts': 'export const w = 1;\n',
      // A provider that imports the catalog: against the layers.
      'server/providers/kind.ts': "import { catalog } from '../catalog/catalog.js';\nexport const kind = catalog;\n",
      'server/catalog/catalog.ts': 'export const catalog = 1;\n',
    });
    const cleanRoot = fixture({
      'server/two/x.ts': "import { y } from '../three/y.js';\nexport const x = y;\n",
      'server/three/y.ts': "import { w } from '../errors.js';\nexport const y = w;\n",
      'server/errors.ts': 'export const w = 1;\n',
      'server/catalog/catalog.ts': "import { kind } from '../providers/kind.js';\nexport const catalog = kind;\n",
      'server/providers/kind.ts': 'export const kind = 1;\n',
    });
    roots.push(cyclicRoot, cleanRoot);
    cyclic = checkDependencies({ root: cyclicRoot, folders: ['server'] });
    clean = checkDependencies({ root: cleanRoot, folders: ['server'] });
    const known = [{ type: 'dependency', from: 'server/providers/kind.ts', to: 'server/catalog/catalog.ts', rule: { severity: 'error', name: 'providers-imports-downward' } }];
    writeFileSync(path.join(cyclicRoot, 'known.json'), JSON.stringify(known));
    withKnown = checkDependencies({ root: cyclicRoot, folders: ['server'], known: 'known.json' });
  });

  it('fails on a file cycle, even a type-only one', () => {
    const cycles = cyclic.violations.filter((line) => line.startsWith('no-circular:'));
    expect(cycles.length).toBeGreaterThan(0);
    for (const line of cycles) expect(line).toMatch(/^no-circular: server\/one\/[ab]\.ts → server\/one\/[ab]\.ts \(server\/one\/[ab]\.ts → server\/one\/[ab]\.ts → server\/one\/[ab]\.ts\)$/);
  });

  it('fails on a folder cycle that no file cycle shows', () => {
    expect(cyclic.folderCycles).toHaveLength(1);
    expect(cyclic.folderCycles[0]!.split('\n')[0]).toBe('server/four/, server/three/, server/two/');
  });

  it('fails on an import against the layers', () => {
    expect(cyclic.violations).toContain('providers-imports-downward: server/providers/kind.ts → server/catalog/catalog.ts');
  });

  it('accepts a listed known violation, and only that one', () => {
    expect(withKnown.knownSeen).toBe(1);
    expect(withKnown.violations).not.toContain('providers-imports-downward: server/providers/kind.ts → server/catalog/catalog.ts');
    expect(withKnown.violations.filter((line) => line.startsWith('no-circular:')).length).toBeGreaterThan(0);
    expect(withKnown.folderCycles).toHaveLength(1);
  });

  it('passes a tree whose imports point one way', () => {
    expect(clean).toEqual({ violations: [], folderCycles: [], knownSeen: 0 });
  });

  it('names a folder by its first two levels, and a top-level file by itself', () => {
    expect(folderOf('server/providers/openai/openai.adapter.ts')).toBe('server/providers/');
    expect(folderOf('server/errors.ts')).toBe('server/errors.ts');
    expect(folderOf('compat/routes/audio.routes.ts')).toBe('compat/routes/');
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProjectRoot, PROJECT_ROOT, projectPath } from './project-root.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'project-root-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the project root', () => {
  it('is the folder of the package.json above this module', () => {
    expect(PROJECT_ROOT).toBe(path.resolve(import.meta.dirname, '..'));
    expect(projectPath('server', 'classifier', 'classifier-lexicon.json')).toBe(path.join(PROJECT_ROOT, 'server', 'classifier', 'classifier-lexicon.json'));
  });

  it("is found from a compiled copy deeper down (dist/server/…): this project's package.json, not the build's own", () => {
    const deep = path.join(scratch, 'app', 'dist', 'server', 'classifier');
    mkdirSync(deep, { recursive: true });
    writeFileSync(path.join(scratch, 'app', 'package.json'), JSON.stringify({ name: 'unified-model-gateway' }));
    expect(findProjectRoot(deep)).toBe(path.join(scratch, 'app'));
    writeFileSync(path.join(scratch, 'app', 'dist', 'package.json'), JSON.stringify({ type: 'module' }));
    expect(findProjectRoot(deep)).toBe(path.join(scratch, 'app'));
    expect(() => findProjectRoot(path.join(scratch))).toThrow(/no unified-model-gateway package.json/);
  });
});

/**
 * The README cannot drift: every shell block in it is marked, `sh run` or
 * `sh example`, and the `sh run` blocks (curl lines, admin CLI examples) are
 * run in order, in one bash with `set -e`, against a gateway started as
 * `npm start` starts it (embedded PGlite, demo catalog, demo key). `curl`
 * fails on an HTTP error status, so each line must answer what the README
 * says it answers. The commands run in a scratch directory (the files they
 * write land there); `npm` is pointed at the repository.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SHELLS = new Set(['sh', 'bash', 'shell', 'console']);
const MARKERS = new Set(['run', 'example']);
/** A budget, not an assertion: about fifteen CLI runs, each a process start (tens of seconds on a loaded two-core machine). */
const RUN_BUDGET_MS = 900_000;

interface Block {
  line: number;
  language: string;
  marker: string;
  code: string;
}

/** The fenced code blocks of a Markdown text, with their info string split into language and marker. */
function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\S+)?(?:[ \t]+(\S+))?\s*$/.exec(lines[index]!);
    if (!open || open[1] === undefined) continue;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && lines[index] !== '```'; index++) body.push(lines[index]!);
    blocks.push({ line: start + 1, language: open[1], marker: open[2] ?? '', code: body.join('\n') });
  }
  return blocks;
}

const blocks = codeBlocks(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
const shellBlocks = blocks.filter((block) => SHELLS.has(block.language));
const runBlocks = shellBlocks.filter((block) => block.marker === 'run');

let gateway: SpawnedGateway;
let dataDir: string;
let workDir: string;
let demoKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'umg-readme-data-'));
  workDir = mkdtempSync(path.join(os.tmpdir(), 'umg-readme-work-'));
  // As `npm start` runs it (the compiled build): embedded PGlite in DATA_DIR, the demo catalog and account, the default limits.
  gateway = await spawnGateway({ DATA_DIR: dataDir, DATABASE_URL: '', GATEWAY_CONFIG: '', GATEWAY_ADMIN_TOKEN: '', GATEWAY_DEMO: '1', RATE_LIMITS: '' }, { compiled: true });
  await waitFor(() => /sk-umg-[0-9A-Za-z]{40,}/.test(gateway.output()), { message: 'the demo key to be printed' });
  demoKey = /sk-umg-[0-9A-Za-z]{40,}/.exec(gateway.output())![0];
}, 240_000);

afterAll(async () => {
  await gateway?.kill();
  for (const dir of [dataDir, workDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The script that runs every `sh run` block in order, noting which block it is in. */
function script(progressFile: string): string {
  const parts = [
    'set -eo pipefail',
    'for tool in curl jq base64; do command -v "$tool" >/dev/null || { echo "the README examples need $tool" >&2; exit 3; }; done',
    // An HTTP error status fails the line, as a person reading the README would see it fail.
    'curl() { command curl --fail-with-body --silent --show-error "$@"; }',
    'npm() { command npm --prefix "$README_REPOSITORY" "$@"; }',
  ];
  runBlocks.forEach((block, index) => parts.push(`echo ${index} > "${progressFile}"`, block.code));
  parts.push(`echo done > "${progressFile}"`);
  return `${parts.join('\n')}\n`;
}

function runBash(source: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', source], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-30_000)));
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-30_000)));
    child.on('error', (error) => resolve({ code: null, output: `${output}${error.message}` }));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the README', () => {
  it('marks every shell block `sh run` or `sh example`', () => {
    const unmarked = shellBlocks.filter((block) => !MARKERS.has(block.marker)).map((block) => `line ${block.line}: \`\`\`${block.language} ${block.marker}`);
    expect(unmarked).toEqual([]);
    // The blocks meant to be run are there: curl lines of every family and the admin CLI.
    const code = runBlocks.map((block) => block.code).join('\n');
    for (const expected of ['/v1/chat/completions', '/v1/embeddings', '/v1/images/edits', '/v1/audio/speech', '/v1/videos', 'admin -- accounts:create', 'admin -- grants:grant', 'admin -- users:create']) {
      expect(code).toContain(expected);
    }
  });

  it('runs its `sh run` blocks against a started gateway, each line succeeding', { timeout: RUN_BUDGET_MS + 60_000 }, async () => {
    const progressFile = path.join(workDir, '.readme-progress');
    const env: NodeJS.ProcessEnv = { ...process.env, GW: gateway.url, KEY: demoKey, PORT: new URL(gateway.url).port, DATA_DIR: dataDir, README_REPOSITORY: ROOT, LOG_LEVEL: 'warn' };
    for (const name of ['DATABASE_URL', 'GATEWAY_URL', 'GATEWAY_ADMIN_TOKEN', 'GATEWAY_CONFIG', 'npm_config_prefix']) delete env[name];
    const run = await runBash(script(progressFile), env);
    const reached = readFileSync(progressFile, 'utf8').trim();
    const block = reached === 'done' ? undefined : runBlocks[Number(reached)];
    const where = block ? `README line ${block.line}:\n${block.code}` : 'after the last block';
    expect({ code: run.code, reached }, `failed in ${where}\n--- output ---\n${run.output}`).toEqual({ code: 0, reached: 'done' });
    // The files the examples write are real media, not error bodies.
    expect(readFileSync(path.join(workDir, 'fox.png')).subarray(1, 4).toString()).toBe('PNG');
    expect(readFileSync(path.join(workDir, 'hello.ogg')).subarray(0, 4).toString()).toBe('OggS');
    expect(readFileSync(path.join(workDir, 'boat.mp4')).subarray(4, 8).toString()).toBe('ftyp');
  });
});

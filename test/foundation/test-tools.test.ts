/**
 * `npm ci && npm test` needs nothing but Node, PostgreSQL and Redis: the media
 * and browser tests run the binaries that npm ci brought (devDependencies),
 * not the system's, unless FFMPEG_PATH / FFPROBE_PATH / CHROMIUM_PATH say otherwise.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireTool, toolPath } from '../../server/media/media-test-tools.js';
import { chromiumExecutable } from '../support/chromium.js';
import { launchBrowser } from '../support/dashboard-browser.js';

const NODE_MODULES = path.resolve('node_modules');

describe('the test tools come from the npm packages', () => {
  it.skipIf(Boolean(process.env.FFMPEG_PATH))('ffmpeg is @ffmpeg-installer\'s binary, and it runs', () => {
    expect(toolPath('ffmpeg')).toBe(path.join(NODE_MODULES, '@ffmpeg-installer', `${process.platform}-${process.arch}`, 'ffmpeg'));
    expect(spawnSync(requireTool('ffmpeg'), ['-version'], { encoding: 'utf8' }).stdout).toMatch(/^ffmpeg version/);
  });

  it.skipIf(Boolean(process.env.FFPROBE_PATH))('ffprobe is @ffprobe-installer\'s binary, and it runs', () => {
    expect(toolPath('ffprobe')).toBe(path.join(NODE_MODULES, '@ffprobe-installer', `${process.platform}-${process.arch}`, 'ffprobe'));
    expect(spawnSync(requireTool('ffprobe'), ['-version'], { encoding: 'utf8' }).stdout).toMatch(/^ffprobe version/);
  });

  it.skipIf(Boolean(process.env.CHROMIUM_PATH))('Chromium is unpacked from @sparticuz/chromium, and a page renders in it', async () => {
    const { path: executable, source } = chromiumExecutable();
    expect(source).toBe('@sparticuz/chromium');
    expect(executable.startsWith(path.join(NODE_MODULES, '.cache', 'umg-chromium'))).toBe(true);
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      await page.setContent('<button onclick="this.textContent = \'pressed\'">Press</button>');
      await page.getByRole('button', { name: 'Press' }).click();
      expect(await page.textContent('button')).toBe('pressed');
    } finally {
      await browser.close();
    }
  });
});

/**
 * ffmpeg and ffprobe for the media tests. They are test tools only (the
 * gateway never runs them). `npm ci` brings both as devDependencies
 * (@ffmpeg-installer/ffmpeg and @ffprobe-installer/ffprobe ship static
 * binaries in their tarballs), so `npm test` needs nothing from the system.
 * FFMPEG_PATH / FFPROBE_PATH name other binaries; a platform the packages do
 * not cover falls back to the ones on PATH. A test that needs a tool that
 * does not run fails with a clear message instead of being skipped.
 */
import { accessSync, chmodSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';

export type MediaTool = 'ffmpeg' | 'ffprobe';

const PACKAGES: Record<MediaTool, { variable: string; packageName: string }> = {
  ffmpeg: { variable: 'FFMPEG_PATH', packageName: '@ffmpeg-installer/ffmpeg' },
  ffprobe: { variable: 'FFPROBE_PATH', packageName: '@ffprobe-installer/ffprobe' },
};

const resolvedTools = new Map<MediaTool, string>();
const checkedTools = new Set<MediaTool>();

/** The packaged binary, made executable if its install script did not run; undefined where the package has none. */
function packagedBinary(packageName: string): string | undefined {
  let binary: string;
  try {
    binary = (createRequire(import.meta.url)(packageName) as { path: string }).path;
  } catch {
    return undefined; // not installed, or no binary for this platform
  }
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    chmodSync(binary, 0o755);
  }
  return binary;
}

/** The binary the tests run for `tool`: FFMPEG_PATH / FFPROBE_PATH, else the npm package's, else the one on PATH. */
export function toolPath(tool: MediaTool): string {
  const known = resolvedTools.get(tool);
  if (known) return known;
  const { variable, packageName } = PACKAGES[tool];
  const resolved = process.env[variable] || packagedBinary(packageName) || tool;
  resolvedTools.set(tool, resolved);
  return resolved;
}

/** Throws unless `tool` (ffmpeg, ffprobe) runs; answers its path. */
export function requireTool(tool: MediaTool): string {
  const binary = toolPath(tool);
  if (checkedTools.has(tool)) return binary;
  const result = spawnSync(binary, ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    const { variable, packageName } = PACKAGES[tool];
    throw new Error(`${tool} is needed by this test but ${binary} does not run here (npm ci installs ${packageName}; or set ${variable}).`);
  }
  checkedTools.add(tool);
  return binary;
}

/** What ffprobe reports for a file's container and streams. */
export interface ProbeResult {
  format: { duration?: string; format_name?: string };
  streams: { codec_name?: string; sample_rate?: string; channels?: number }[];
}

/** `ffprobe -show_entries format=duration,format_name:stream=codec_name,sample_rate,channels` as JSON. */
export function probeMedia(path: string, inputOptions: string[] = []): ProbeResult {
  const output = execFileSync(
    requireTool('ffprobe'),
    ['-v', 'error', ...inputOptions, '-show_entries', 'format=duration,format_name:stream=codec_name,sample_rate,channels', '-of', 'json', path],
    { encoding: 'utf8' },
  );
  return JSON.parse(output) as ProbeResult;
}

/** Decodes the whole file with ffmpeg; returns the exit status and everything it printed at level `error`. */
export function decodeWithFfmpeg(path: string, inputOptions: string[] = []): { status: number | null; errors: string } {
  const result = spawnSync(requireTool('ffmpeg'), ['-v', 'error', ...inputOptions, '-i', path, '-f', 'null', '-'], { encoding: 'utf8' });
  return { status: result.status, errors: `${result.stderr}${result.stdout}`.trim() };
}

/** Runs ffmpeg with `arguments_`, throwing with its output when it fails. */
export function runFfmpeg(arguments_: string[]): void {
  const result = spawnSync(requireTool('ffmpeg'), ['-v', 'error', '-y', ...arguments_], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ffmpeg ${arguments_.join(' ')} failed: ${result.stderr}`);
}

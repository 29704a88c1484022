/**
 * ffmpeg and ffprobe for the media tests. They are test tools only (the
 * gateway never runs them). A test that needs one fails with a clear message
 * when it is missing instead of being skipped: CI installs both.
 */
import { execFileSync, spawnSync } from 'node:child_process';

const checkedTools = new Set<string>();

/** Throws unless `tool` (ffmpeg, ffprobe) runs. */
export function requireTool(tool: 'ffmpeg' | 'ffprobe'): void {
  if (checkedTools.has(tool)) return;
  const result = spawnSync(tool, ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new Error(`${tool} is needed by this test but does not run here (install it: apt-get install -y ffmpeg).`);
  }
  checkedTools.add(tool);
}

/** What ffprobe reports for a file's container and streams. */
export interface ProbeResult {
  format: { duration?: string; format_name?: string };
  streams: { codec_name?: string; sample_rate?: string; channels?: number }[];
}

/** `ffprobe -show_entries format=duration,format_name:stream=codec_name,sample_rate,channels` as JSON. */
export function probeMedia(path: string, inputOptions: string[] = []): ProbeResult {
  requireTool('ffprobe');
  const output = execFileSync(
    'ffprobe',
    ['-v', 'error', ...inputOptions, '-show_entries', 'format=duration,format_name:stream=codec_name,sample_rate,channels', '-of', 'json', path],
    { encoding: 'utf8' },
  );
  return JSON.parse(output) as ProbeResult;
}

/** Decodes the whole file with ffmpeg; returns the exit status and everything it printed at level `error`. */
export function decodeWithFfmpeg(path: string, inputOptions: string[] = []): { status: number | null; errors: string } {
  requireTool('ffmpeg');
  const result = spawnSync('ffmpeg', ['-v', 'error', ...inputOptions, '-i', path, '-f', 'null', '-'], { encoding: 'utf8' });
  return { status: result.status, errors: `${result.stderr}${result.stdout}`.trim() };
}

/** Runs ffmpeg with `arguments_`, throwing with its output when it fails. */
export function runFfmpeg(arguments_: string[]): void {
  requireTool('ffmpeg');
  const result = spawnSync('ffmpeg', ['-v', 'error', '-y', ...arguments_], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`ffmpeg ${arguments_.join(' ')} failed: ${result.stderr}`);
}

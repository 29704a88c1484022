/**
 * What a model offers for `/v1/videos` (catalog `videos`), and the checks of
 * a request against it: 400s naming `size` or `seconds`.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import type { ModelEntry } from '../catalog/catalog.schema.js';
import { GatewayError } from '../errors.js';

type VideoOptions = NonNullable<ModelEntry['videos']>;

/** A model declaring no `videos` offers what OpenAI's video models do. */
export const DEFAULT_VIDEO_OPTIONS: VideoOptions = { sizes: ['720x1280', '1280x720', '1024x1792', '1792x1024'], seconds: [4, 8, 12] };

export function videoOptionsOf(model: CatalogModel): VideoOptions {
  return model.entry.videos ?? DEFAULT_VIDEO_OPTIONS;
}

function describeSeconds(seconds: VideoOptions['seconds']): string {
  return Array.isArray(seconds) ? `one of ${seconds.join(', ')}` : `from ${seconds.min} to ${seconds.max}`;
}

/** The size asked for, or the model's default; 400 naming `size` when the model does not offer it. */
export function resolveVideoSize(model: CatalogModel, size: string | undefined): string {
  const options = videoOptionsOf(model);
  const chosen = size ?? options.defaultSize ?? options.sizes[0]!;
  if (!options.sizes.includes(chosen)) {
    throw new GatewayError('INVALID_REQUEST', `Invalid value for 'size': '${chosen}' is not offered by '${model.id}' (expected one of ${options.sizes.join(', ')}).`, {
      param: 'size',
    });
  }
  return chosen;
}

/** The duration asked for (a string on the wire, or a number), or the model's default; 400 naming `seconds` when it is not a number the model offers. */
export function resolveVideoSeconds(model: CatalogModel, seconds: string | number | undefined): number {
  const options = videoOptionsOf(model);
  const fallback = options.defaultSeconds ?? (Array.isArray(options.seconds) ? options.seconds[0]! : options.seconds.min);
  const value = seconds === undefined ? fallback : typeof seconds === 'number' ? seconds : /^\s*\d+(\.\d+)?\s*$/.test(seconds) ? Number(seconds) : NaN;
  const offered = Array.isArray(options.seconds) ? options.seconds.includes(value) : value >= options.seconds.min && value <= options.seconds.max;
  if (!Number.isFinite(value) || !offered) {
    throw new GatewayError('INVALID_REQUEST', `Invalid value for 'seconds': ${JSON.stringify(seconds)} is not a duration '${model.id}' offers (expected ${describeSeconds(options.seconds)}).`, {
      param: 'seconds',
    });
  }
  return value;
}

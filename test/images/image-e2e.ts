/**
 * What the image suites share: PNG files to upload, an SDK client on a test
 * gateway, a model with narrow capabilities, and readers of an SDK error.
 */
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import pngjs from 'pngjs';
import { encodePng } from '../../server/media/png.js';
import type { CatalogFile, ModelEntry } from '../../server/catalog/catalog.schema.js';
import { DEMO_CATALOG } from '../../server/catalog/demo-catalog.js';
import type { TestGateway } from '../support/gateway.js';

export function imageClient(gateway: TestGateway, key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

/**
 * A PNG of one colour (`alpha` 0 = fully transparent), or of random pixels
 * (incompressible: its file is about `4·w·h` bytes). RGBA, or RGB without an
 * alpha channel when `opaqueRgb`.
 */
export function makePng(width: number, height: number, fill: { rgba?: [number, number, number, number]; noise?: boolean; opaqueRgb?: boolean } = {}): Buffer {
  if (fill.noise) return encodePng(width, height, randomBytes(width * height * 4));
  const [red, green, blue, alpha] = fill.rgba ?? [40, 120, 200, 255];
  const rgba = new Uint8Array(width * height * 4);
  for (let index = 0; index < rgba.length; index += 4) rgba.set([red, green, blue, alpha], index);
  if (!fill.opaqueRgb) return encodePng(width, height, rgba);
  const image = new pngjs.PNG({ width, height });
  image.data = Buffer.from(rgba);
  return pngjs.PNG.sync.write(image, { colorType: 2 });
}

/** A PNG of these RGBA pixels. */
export function pngOfPixels(width: number, height: number, rgba: Uint8Array): Buffer {
  return encodePng(width, height, rgba);
}

/** A model that accepts little, to see each capability refused. */
export const NARROW_IMAGE_MODEL: ModelEntry = {
  id: 'mock-image-narrow',
  ownedBy: 'umg',
  provider: 'mock',
  upstreamModel: 'mock-image-narrow',
  endpoints: ['/v1/images/generations', '/v1/images/edits'],
  pricing: { input: 0, output: 0, image: 0.02 },
  images: { sizes: ['256x256', '512x512', '1024x1024'], qualities: ['standard'], maxPromptLength: 100, maxImages: 2, maxInputImages: 2 },
};

/** The demo catalog plus {@link NARROW_IMAGE_MODEL}. */
export const IMAGE_TEST_CATALOG: CatalogFile = { ...DEMO_CATALOG, models: [...DEMO_CATALOG.models, NARROW_IMAGE_MODEL] };

export type ApiError = InstanceType<typeof OpenAI.APIError>;

export async function apiErrorOf(call: Promise<unknown>, what = 'the call'): Promise<ApiError> {
  const error = await call.then(
    () => {
      throw new Error(`expected ${what} to fail, it succeeded`);
    },
    (caught: unknown) => caught,
  );
  if (!(error instanceof OpenAI.APIError)) throw error;
  return error;
}

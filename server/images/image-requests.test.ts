import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../catalog/catalog.js';
import type { ModelEntry } from '../catalog/catalog.schema.js';
import { GatewayError } from '../errors.js';
import { assertImagePlan, checkImageRequest } from './image-requests.js';

function modelWith(images?: ModelEntry['images']): CatalogModel {
  const entry: ModelEntry = { id: 'img', ownedBy: 'x', provider: 'p', upstreamModel: 'img', endpoints: ['/v1/images/generations'], pricing: { input: 0, output: 0, image: 1 }, ...(images ? { images } : {}) };
  return { id: 'img', entry } as CatalogModel;
}

function refusal(call: () => unknown): [string, string | null] {
  try {
    call();
  } catch (error) {
    if (error instanceof GatewayError) return [error.code, error.param];
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('checkImageRequest', () => {
  it('fills SPEC defaults: one 1024x1024 image as a url, no stream', () => {
    expect(checkImageRequest(modelWith(), { prompt: 'p' })).toEqual({
      count: 1,
      sizeLabel: '1024x1024',
      width: 1024,
      height: 1024,
      stream: false,
      partialImages: 0,
      responseFormat: 'url',
    });
  });

  it('reads sizes (auto as 1024x1024) and falls back to the first declared size when the model lacks 1024x1024', () => {
    expect(checkImageRequest(modelWith(), { prompt: 'p', size: '1536x1024' })).toMatchObject({ width: 1536, height: 1024 });
    expect(checkImageRequest(modelWith(), { prompt: 'p', size: 'auto' })).toMatchObject({ sizeLabel: 'auto', width: 1024, height: 1024 });
    expect(checkImageRequest(modelWith({ sizes: ['256x256', '512x512'] }), { prompt: 'p' })).toMatchObject({ sizeLabel: '256x256', width: 256 });
  });

  it('refuses what the model does not declare, naming the field', () => {
    const narrow = modelWith({ sizes: ['512x512'], qualities: [], styles: ['natural'], maxImages: 1, maxPromptLength: 5 });
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'p', size: '1024x1024' }))).toEqual(['UNSUPPORTED_FEATURE', 'size']);
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'p', quality: 'standard' }))).toEqual(['UNSUPPORTED_FEATURE', 'quality']);
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'p', style: 'vivid' }))).toEqual(['UNSUPPORTED_FEATURE', 'style']);
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'p', n: 2 }))).toEqual(['UNSUPPORTED_FEATURE', 'n']);
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'p', stream: true }))).toEqual(['UNSUPPORTED_FEATURE', 'stream']);
    expect(refusal(() => checkImageRequest(narrow, { prompt: 'longer' }))).toEqual(['INVALID_REQUEST', 'prompt']);
    expect(checkImageRequest(narrow, { prompt: 'p', style: 'natural' })).toMatchObject({ sizeLabel: '512x512' });
  });

  it('refuses the free plan only', () => {
    expect(refusal(() => assertImagePlan('free'))).toEqual(['PLAN_RESTRICTED', null]);
    expect(() => assertImagePlan('pro')).not.toThrow();
  });
});

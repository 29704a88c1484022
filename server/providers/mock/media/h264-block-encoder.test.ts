import { describe, expect, it } from 'vitest';
import { H264BlockEncoder, selectLevelIdc } from './h264-block-encoder.js';

describe('selectLevelIdc', () => {
  it('picks the lowest level of Table A-1 that admits the frame size, shape and rate', () => {
    expect(selectLevelIdc(1, 1, 30)).toBe(10);
    expect(selectLevelIdc(80, 45, 30)).toBe(31); // 1280x720
    expect(selectLevelIdc(120, 68, 30)).toBe(40); // 1920x1080
    expect(selectLevelIdc(120, 68, 60)).toBe(42);
    expect(selectLevelIdc(120, 120, 30)).toBe(50); // 1920x1920
    // 18x1920: few macroblocks, but 120 rows exceed sqrt(8 x MaxFS) below level 3.1.
    expect(selectLevelIdc(2, 120, 30)).toBe(31);
  });
});

describe('H264BlockEncoder', () => {
  it('describes a Constrained Baseline stream', () => {
    const encoder = new H264BlockEncoder({ width: 1920, height: 1080, fps: 30, gopLength: 30 });
    expect(encoder.macroblockColumns).toBe(120);
    expect(encoder.macroblockRows).toBe(68);
    expect(encoder.parameterSets).toMatchObject({ profileIdc: 66, profileCompatibility: 0xc0, levelIdc: 40, codec: 'avc1.42c028' });
    expect(encoder.parameterSets.sps[0]).toBe(0x67);
    expect(encoder.parameterSets.pps[0]).toBe(0x68);
  });

  it('skips a picture that did not change down to a few bytes', () => {
    const encoder = new H264BlockEncoder({ width: 320, height: 240, fps: 30, gopLength: 30 });
    const picture = new Uint8Array(20 * 15 * 3).fill(128);
    const idr = encoder.encodeIdr(picture);
    const repeat = encoder.encodePredicted(picture, picture);
    expect(idr[0] & 0x1f).toBe(5);
    expect(repeat[0] & 0x1f).toBe(1);
    expect(repeat.length).toBeLessThan(10);
  });

  it('rejects a block picture of the wrong size', () => {
    const encoder = new H264BlockEncoder({ width: 32, height: 32, fps: 30, gopLength: 30 });
    expect(() => encoder.encodeIdr(new Uint8Array(3))).toThrow(RangeError);
  });
});

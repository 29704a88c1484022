/**
 * The offline mock provider's speech synthesis (`POST /v1/audio/speech`).
 *
 * It produces real, decodable audio in each of OpenAI's response formats,
 * streamed block by block as it is made, and embeds the request (text, voice,
 * speed, model) in the file's metadata wherever the format has metadata, so
 * that the mock transcription gives the text back exactly.
 *
 * | format | container and codec | metadata | made by |
 * | --- | --- | --- | --- |
 * | mp3 | MPEG-2 Layer III, 24 kHz mono CBR | ID3v2.4 `TXXX` | LAME (wasm-media-encoders) |
 * | opus | Ogg Opus, 24 kHz input | OpusTags | libopus (opusscript) + our Ogg pager |
 * | aac | ADTS AAC-LC (noise substitution) | ID3v2.4 `TXXX` in front | our writer (adts-noise-writer.ts) |
 * | flac | FLAC, 16-bit mono | VORBIS_COMMENT | our encoder (flac-writer.ts) |
 * | wav | RIFF WAVE PCM 16-bit mono | LIST/INFO `ICMT` | our header |
 * | pcm | raw signed 16-bit little-endian, 24 kHz mono | none | — |
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import OpusScript from 'opusscript';
import { createEncoder } from 'wasm-media-encoders';
import { AAC_FRAME_SAMPLES, AdtsNoiseWriter } from './adts-noise-writer.js';
import { buildId3v2Tag, buildVorbisComment } from './audio-tags.js';
import { buildFlacHeader, FLAC_BLOCK_SIZE, FlacFrameEncoder } from './flac-writer.js';
import { OggPageWriter } from './ogg-writer.js';
import { MOCK_SPEECH_TAG, toMockSpeechTag, type MockSpeechMetadata } from './speech-metadata.js';
import { planSpeech, renderSpeechSamples, speechLevelAt, voiceTimbre, type SpeechPlan } from './speech-signal.js';

/** OpenAI's speech `response_format` values. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** Content type of each format (GAPS.md "Audio"). */
export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** A speech request as the route has validated it. */
export interface SpeechRequest {
  text: string;
  voice: string;
  format: SpeechFormat;
  /** 0.25 to 4. */
  speed: number;
  model: string;
}

/** The audio of a speech request: known type and length up front, bytes as they are encoded. */
export interface SynthesizedSpeech {
  contentType: string;
  /** Length of the synthesised sound (codec padding aside), for billing and logs. */
  durationSeconds: number;
  /**
   * The file, in order. Each chunk is about 2.5 s of audio; iteration yields
   * to the event loop between chunks. Ending the iteration early frees the
   * encoder.
   */
  chunks: AsyncIterable<Uint8Array>;
}

/** Samples rendered and encoded at a time: 2.56 s, a whole number of FLAC, AAC and Opus frames. */
const BLOCK_SAMPLES = 61_440;

const ENCODER_NAME = 'umg mock speech';

/**
 * Synthesises the mock speech of `request`. Validation (input of at most
 * 4096 characters, speed from 0.25 to 4, a known format) happens here,
 * synchronously, so a bad request throws RangeError before any byte is sent.
 */
export function synthesizeSpeech(request: SpeechRequest): SynthesizedSpeech {
  if (!(SPEECH_FORMATS as readonly string[]).includes(request.format)) {
    throw new RangeError(`Unknown speech format ${JSON.stringify(request.format)}.`);
  }
  const plan = planSpeech(request.text, request.voice, request.speed);
  const metadata: MockSpeechMetadata = { text: request.text, voice: request.voice, speed: request.speed, model: request.model };
  return {
    contentType: SPEECH_CONTENT_TYPES[request.format],
    durationSeconds: plan.totalSamples / plan.sampleRate,
    chunks: ENCODERS[request.format](plan, metadata, request),
  };
}

type SpeechEncoder = (plan: SpeechPlan, metadata: MockSpeechMetadata, request: SpeechRequest) => AsyncGenerator<Uint8Array>;

const ENCODERS: Record<SpeechFormat, SpeechEncoder> = {
  pcm: encodePcm,
  wav: encodeWav,
  flac: encodeFlac,
  mp3: encodeMp3,
  opus: encodeOpus,
  aac: encodeAac,
};

/** The plan's samples in blocks of `BLOCK_SAMPLES` (the last one shorter), yielding to the event loop between blocks. */
async function* renderBlocks(plan: SpeechPlan): AsyncGenerator<Int16Array> {
  for (let start = 0; start < plan.totalSamples; start += BLOCK_SAMPLES) {
    if (start > 0) await yieldToEventLoop();
    const block = new Int16Array(Math.min(BLOCK_SAMPLES, plan.totalSamples - start));
    renderSpeechSamples(plan, start, block);
    yield block;
  }
}

const LITTLE_ENDIAN = endianness() === 'LE';

function toLittleEndianBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  return LITTLE_ENDIAN ? bytes : Buffer.from(bytes).swap16();
}

async function* encodePcm(plan: SpeechPlan): AsyncGenerator<Uint8Array> {
  for await (const block of renderBlocks(plan)) yield toLittleEndianBytes(block);
}

/** A RIFF INFO sub-chunk: NUL-terminated text, padded to an even size. */
function infoChunk(id: string, text: string): Buffer {
  const value = Buffer.from(`${text}\u0000`, 'latin1');
  const chunk = Buffer.alloc(8 + value.length + (value.length % 2));
  chunk.write(id, 0, 'latin1');
  chunk.writeUInt32LE(value.length, 4);
  value.copy(chunk, 8);
  return chunk;
}

/** RIFF/WAVE header for 16-bit mono PCM with a LIST/INFO chunk; the data size is known from the plan. */
function buildWavHeader(plan: SpeechPlan, metadata: MockSpeechMetadata): Buffer {
  const dataBytes = plan.totalSamples * 2;
  const info = Buffer.concat([Buffer.from('INFO', 'latin1'), infoChunk('ISFT', ENCODER_NAME), infoChunk('ICMT', toMockSpeechTag(metadata))]);
  const format = Buffer.alloc(24);
  format.write('fmt ', 0, 'latin1');
  format.writeUInt32LE(16, 4);
  format.writeUInt16LE(1, 8); // PCM
  format.writeUInt16LE(1, 10); // mono
  format.writeUInt32LE(plan.sampleRate, 12);
  format.writeUInt32LE(plan.sampleRate * 2, 16); // bytes per second
  format.writeUInt16LE(2, 20); // block align
  format.writeUInt16LE(16, 22); // bits per sample
  const list = Buffer.alloc(8);
  list.write('LIST', 0, 'latin1');
  list.writeUInt32LE(info.length, 4);
  const data = Buffer.alloc(8);
  data.write('data', 0, 'latin1');
  data.writeUInt32LE(dataBytes, 4);
  const riff = Buffer.alloc(12);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(4 + format.length + list.length + info.length + data.length + dataBytes, 4);
  riff.write('WAVE', 8, 'latin1');
  return Buffer.concat([riff, format, list, info, data]);
}

async function* encodeWav(plan: SpeechPlan, metadata: MockSpeechMetadata): AsyncGenerator<Uint8Array> {
  yield buildWavHeader(plan, metadata);
  // 2-byte samples: the data chunk is always of even size, no pad byte.
  for await (const block of renderBlocks(plan)) yield toLittleEndianBytes(block);
}

function vorbisFields(metadata: MockSpeechMetadata): [string, string][] {
  return [
    ['ENCODER', ENCODER_NAME],
    [MOCK_SPEECH_TAG, toMockSpeechTag(metadata)],
  ];
}

async function* encodeFlac(plan: SpeechPlan, metadata: MockSpeechMetadata): AsyncGenerator<Uint8Array> {
  yield buildFlacHeader({ sampleRate: plan.sampleRate, totalSamples: plan.totalSamples, vorbisComment: buildVorbisComment(ENCODER_NAME, vorbisFields(metadata)) });
  const encoder = new FlacFrameEncoder(plan.sampleRate);
  for await (const block of renderBlocks(plan)) {
    const frames: Buffer[] = [];
    for (let start = 0; start < block.length; start += FLAC_BLOCK_SIZE) frames.push(encoder.encodeFrame(block.subarray(start, start + FLAC_BLOCK_SIZE)));
    yield Buffer.concat(frames);
  }
}

function id3Tag(metadata: MockSpeechMetadata): Buffer {
  return buildId3v2Tag([
    { id: 'TSSE', value: ENCODER_NAME },
    { id: 'TXXX', description: MOCK_SPEECH_TAG, value: toMockSpeechTag(metadata) },
  ]);
}

let mp3Wasm: Promise<Buffer> | undefined;
let mp3Module: WebAssembly.Module | undefined;

/** A LAME encoder of its own for each request, compiled from the wasm once per process. */
async function createMp3Encoder() {
  if (mp3Module) return createEncoder('audio/mpeg', mp3Module);
  mp3Wasm ??= readFile(createRequire(import.meta.url).resolve('wasm-media-encoders/wasm/mp3'));
  return createEncoder('audio/mpeg', await mp3Wasm, (module) => {
    mp3Module = module;
  });
}

async function* encodeMp3(plan: SpeechPlan, metadata: MockSpeechMetadata, request: SpeechRequest): AsyncGenerator<Uint8Array> {
  yield id3Tag(metadata);
  const encoder = await createMp3Encoder();
  // OpenAI's tts-1-hd is the higher-quality model: give it a higher bit rate.
  encoder.configure({ sampleRate: plan.sampleRate, channels: 1, bitrate: request.model.endsWith('-hd') ? 64 : 48 });
  const floats = new Float32Array(BLOCK_SAMPLES);
  for await (const block of renderBlocks(plan)) {
    const input = floats.subarray(0, block.length);
    for (let index = 0; index < block.length; index++) input[index] = block[index]! / 32768;
    // The encoder returns a view into its own memory: copy it before the next call.
    const encoded = encoder.encode([input]);
    if (encoded.length > 0) yield encoded.slice();
  }
  const tail = encoder.finalize();
  if (tail.length > 0) yield tail.slice();
}

/** Opus frames of 40 ms: libopus encodes them faster than 20 ms ones, and speech codecs use both. */
const OPUS_FRAME_SAMPLES = 960;
/** Encoder lookahead at 48 kHz (RFC 7845 5.1: pre-skip), the value libopus reports for the `audio` application. */
const OPUS_PRE_SKIP = 312;
const OPUS_SET_COMPLEXITY = 4010;

function buildOpusHead(sampleRate: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'latin1');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(OPUS_PRE_SKIP, 10);
  head.writeUInt32LE(sampleRate, 12); // original input rate, informational
  head.writeInt16LE(0, 16); // output gain
  head[18] = 0; // channel mapping family 0: mono or stereo
  return head;
}

async function* encodeOpus(plan: SpeechPlan, metadata: MockSpeechMetadata, request: SpeechRequest): AsyncGenerator<Uint8Array> {
  if (plan.sampleRate !== 24000) throw new RangeError('The mock Opus encoder is set up for 24 kHz input.');
  // A stream serial from the text keeps files deterministic.
  const pages = new OggPageWriter(plan.noiseSeed);
  yield Buffer.concat([
    ...pages.writePacket(buildOpusHead(plan.sampleRate), 0, { flush: true }),
    ...pages.writePacket(Buffer.concat([Buffer.from('OpusTags', 'latin1'), buildVorbisComment(ENCODER_NAME, vorbisFields(metadata))]), 0, { flush: true }),
  ]);
  const encoder = new OpusScript(24000, 1, OpusScript.Application.AUDIO);
  try {
    encoder.setBitrate(request.model.endsWith('-hd') ? 48_000 : 32_000);
    encoder.encoderCTL(OPUS_SET_COMPLEXITY, 0);
    // Granule positions count 48 kHz samples of decoder output, the pre-skip
    // included; the decoder drops the first pre-skip samples (the encoder's
    // lookahead), so frames must cover the clip plus the lookahead, and the
    // last page's granule trims the padding after the clip (RFC 7845 4.4).
    const rateFactor = 48000 / plan.sampleRate;
    const lookahead = OPUS_PRE_SKIP / rateFactor;
    const frameCount = Math.ceil((plan.totalSamples + lookahead) / OPUS_FRAME_SAMPLES);
    const finalGranule = OPUS_PRE_SKIP + plan.totalSamples * rateFactor;
    const frame = new Int16Array(OPUS_FRAME_SAMPLES);
    let frameIndex = 0;
    const encodeFrames = (block: Int16Array, flushAtEnd: boolean): Buffer => {
      const output: Buffer[] = [];
      for (let start = 0; start < block.length; start += OPUS_FRAME_SAMPLES) {
        frame.fill(0);
        frame.set(block.subarray(start, start + OPUS_FRAME_SAMPLES));
        // opusscript takes the frame as 16-bit little-endian bytes.
        const packet = encoder.encode(toLittleEndianBytes(frame), OPUS_FRAME_SAMPLES);
        frameIndex++;
        const endOfStream = frameIndex === frameCount;
        const granule = endOfStream ? finalGranule : frameIndex * OPUS_FRAME_SAMPLES * rateFactor;
        const flush = flushAtEnd && start + OPUS_FRAME_SAMPLES >= block.length;
        output.push(...pages.writePacket(packet, granule, { flush, endOfStream }));
      }
      return Buffer.concat(output);
    };
    // A partial last frame is zero-padded by encodeFrames.
    for await (const block of renderBlocks(plan)) yield encodeFrames(block, true);
    // Silence to let the lookahead through, when the clip's frames do not cover it.
    if (frameIndex < frameCount) yield encodeFrames(new Int16Array((frameCount - frameIndex) * OPUS_FRAME_SAMPLES), true);
  } finally {
    encoder.delete();
  }
}

async function* encodeAac(plan: SpeechPlan, metadata: MockSpeechMetadata, request: SpeechRequest): AsyncGenerator<Uint8Array> {
  yield id3Tag(metadata);
  // The noise band follows the voice: from its second to its sixteenth harmonic.
  const pitch = voiceTimbre(request.voice).pitch;
  const writer = new AdtsNoiseWriter(plan.sampleRate, pitch * 2, Math.min(11_000, pitch * 16));
  // One frame more than the samples need: an AAC decoder outputs each frame's second half with the next one.
  const frameCount = Math.ceil(plan.totalSamples / AAC_FRAME_SAMPLES) + 1;
  const framesPerBlock = BLOCK_SAMPLES / AAC_FRAME_SAMPLES;
  for (let firstFrame = 0; firstFrame < frameCount; firstFrame += framesPerBlock) {
    if (firstFrame > 0) await yieldToEventLoop();
    const frames: Buffer[] = [];
    for (let frame = firstFrame; frame < Math.min(frameCount, firstFrame + framesPerBlock); frame++) {
      // The loudest point of the frame's span, so that a word shorter than a frame is still heard.
      let level = 0;
      for (let probe = 0; probe < 4; probe++) level = Math.max(level, speechLevelAt(plan, frame * AAC_FRAME_SAMPLES - 512 + probe * 256));
      frames.push(writer.writeFrame(level));
    }
    yield Buffer.concat(frames);
  }
}

/**
 * The sound of the mock speech: not speech, but audibly tied to the text.
 * Every word is a short harmonic tone with a consonant-like click of noise at
 * its start; spaces and punctuation are silence. Time is shared out per
 * character (14 characters a second at speed 1, as fast talkers go), so the
 * duration follows the input length and the speed. Each voice has its own
 * pitch and timbre, and each word moves the pitch a little (from a hash of
 * the word), which gives the result a speech-like melody.
 */

/** Samples per second of every mock speech format (OpenAI's `pcm` is 24 kHz, 16-bit, mono). */
export const SPEECH_SAMPLE_RATE = 24_000;

/** Characters spoken per second at speed 1. */
export const SPEECH_CHARACTERS_PER_SECOND = 14;

/** Shortest clip, even for a one-letter input. */
export const SPEECH_MINIMUM_SECONDS = 0.5;

/** Longest input accepted (SPEC: speech input at most 4096 characters). */
export const SPEECH_MAX_INPUT_CHARACTERS = 4096;

/** Speed range (SPEC: 0.25 to 4.0). */
export const SPEECH_SPEED_RANGE = { min: 0.25, max: 4 } as const;

interface VoiceTimbre {
  /** Base pitch in Hz. */
  pitch: number;
  /** Relative strength of the second and third harmonics. */
  harmonics: [number, number];
}

/** OpenAI's voices; lower voices get fuller harmonics. Unknown voices get a pitch from their name. */
const VOICE_TIMBRES: Record<string, VoiceTimbre> = {
  alloy: { pitch: 200, harmonics: [0.45, 0.2] },
  ash: { pitch: 150, harmonics: [0.5, 0.25] },
  ballad: { pitch: 235, harmonics: [0.35, 0.15] },
  cedar: { pitch: 125, harmonics: [0.55, 0.3] },
  coral: { pitch: 275, harmonics: [0.3, 0.15] },
  echo: { pitch: 140, harmonics: [0.5, 0.3] },
  fable: { pitch: 250, harmonics: [0.4, 0.1] },
  marin: { pitch: 265, harmonics: [0.35, 0.2] },
  nova: { pitch: 300, harmonics: [0.3, 0.1] },
  onyx: { pitch: 105, harmonics: [0.6, 0.35] },
  sage: { pitch: 220, harmonics: [0.4, 0.2] },
  shimmer: { pitch: 340, harmonics: [0.25, 0.1] },
  verse: { pitch: 180, harmonics: [0.45, 0.25] },
};

function hashString(value: string): number {
  // FNV-1a over UTF-16 code units: stable and cheap, no cryptographic need.
  let hash = 0x811c9dc5;
  for (let index = 0; index < value.length; index++) hash = Math.imul(hash ^ value.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

/** The timbre of a voice (case-insensitive). */
export function voiceTimbre(voice: string): VoiceTimbre {
  const known = VOICE_TIMBRES[voice.toLowerCase()];
  if (known) return known;
  const hash = hashString(voice.toLowerCase());
  return { pitch: 110 + (hash % 240), harmonics: [0.3 + ((hash >>> 8) % 30) / 100, 0.1 + ((hash >>> 16) % 20) / 100] };
}

/** One word of the plan: where it sounds (in samples) and at what pitch. */
export interface SpeechWord {
  start: number;
  end: number;
  frequency: number;
}

/** Everything needed to render the mock speech of an input, in any block order. */
export interface SpeechPlan {
  sampleRate: number;
  totalSamples: number;
  words: SpeechWord[];
  harmonics: [number, number];
  /** Seed of the noise clicks, from the text. */
  noiseSeed: number;
}

/** Throws RangeError for an input or speed outside SPEC's bounds. */
export function assertSpeechInput(text: string, speed: number): void {
  if ([...text].length > SPEECH_MAX_INPUT_CHARACTERS) {
    throw new RangeError(`Speech input is limited to ${SPEECH_MAX_INPUT_CHARACTERS} characters.`);
  }
  if (!Number.isFinite(speed) || speed < SPEECH_SPEED_RANGE.min || speed > SPEECH_SPEED_RANGE.max) {
    throw new RangeError(`Speech speed must be from ${SPEECH_SPEED_RANGE.min} to ${SPEECH_SPEED_RANGE.max}.`);
  }
}

/** Lays the words of `text` out in time. */
export function planSpeech(text: string, voice: string, speed: number): SpeechPlan {
  assertSpeechInput(text, speed);
  const characters = [...text];
  const samplesPerCharacter = SPEECH_SAMPLE_RATE / (SPEECH_CHARACTERS_PER_SECOND * speed);
  const spokenSamples = Math.round(characters.length * samplesPerCharacter);
  const totalSamples = Math.max(Math.round(SPEECH_MINIMUM_SECONDS * SPEECH_SAMPLE_RATE), spokenSamples);
  const timbre = voiceTimbre(voice);
  const words: SpeechWord[] = [];
  // Letters and digits of any script sound; everything else is a pause.
  const sounding = /[\p{L}\p{N}]/u;
  let wordStart = -1;
  const closeWord = (endCharacter: number) => {
    if (wordStart < 0) return;
    const word = characters.slice(wordStart, endCharacter).join('');
    // Up to ±20% around the voice's pitch, in steps, like a simple intonation.
    const step = (hashString(word.toLowerCase()) % 9) - 4;
    words.push({
      start: Math.round(wordStart * samplesPerCharacter),
      end: Math.round(endCharacter * samplesPerCharacter),
      frequency: timbre.pitch * (1 + step * 0.05),
    });
    wordStart = -1;
  };
  characters.forEach((character, position) => {
    if (sounding.test(character)) {
      if (wordStart < 0) wordStart = position;
    } else {
      closeWord(position);
    }
  });
  closeWord(characters.length);
  return { sampleRate: SPEECH_SAMPLE_RATE, totalSamples, words, harmonics: timbre.harmonics, noiseSeed: hashString(text) };
}

const SINE_TABLE_SIZE = 8192;
const SINE_TABLE = Float32Array.from({ length: SINE_TABLE_SIZE }, (_, index) => Math.sin((2 * Math.PI * index) / SINE_TABLE_SIZE));

/** Peak level of a word, as a fraction of full scale (about -10 dBFS with harmonics). */
const WORD_LEVEL = 0.22;
/** Fade in and out of a word (10 ms and 25 ms), so words do not click. */
const ATTACK_SAMPLES = 240;
const RELEASE_SAMPLES = 600;
/** A burst of noise at the start of each word stands for its first consonant (15 ms). */
const CLICK_SAMPLES = 360;
const CLICK_LEVEL = 0.08;

/** Loudness of the words at `sample` from 0 to 1 (the envelope without the tone), for encoders that shape noise. */
export function speechLevelAt(plan: SpeechPlan, sample: number): number {
  const word = findWord(plan, sample);
  if (word < 0) return 0;
  return envelope(plan.words[word]!, sample);
}

function envelope(word: SpeechWord, sample: number): number {
  const fromStart = sample - word.start;
  const toEnd = word.end - sample;
  return Math.min(1, fromStart / ATTACK_SAMPLES, toEnd / RELEASE_SAMPLES);
}

/** Index of the word sounding at `sample`; -1 in a pause. */
function findWord(plan: SpeechPlan, sample: number): number {
  const { words } = plan;
  let low = 0;
  let high = words.length - 1;
  // Binary search for the last word starting at or before `sample`.
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (words[middle]!.start <= sample) low = middle + 1;
    else high = middle - 1;
  }
  return high >= 0 && words[high]!.end > sample ? high : -1;
}

/**
 * Renders samples `[start, start + output.length)` of the plan into `output`
 * (16-bit signed). Blocks can be rendered in any order and give the same
 * samples as one long render: phases are computed from absolute time.
 */
export function renderSpeechSamples(plan: SpeechPlan, start: number, output: Int16Array): void {
  output.fill(0);
  const end = Math.min(plan.totalSamples, start + output.length);
  const [second, third] = plan.harmonics;
  const normalise = WORD_LEVEL / (1 + second + third);
  let wordIndex = findWord(plan, start);
  if (wordIndex < 0) {
    // In a pause: start from the next word.
    wordIndex = plan.words.findIndex((word) => word.start >= start);
    if (wordIndex < 0) return;
  }
  for (; wordIndex < plan.words.length; wordIndex++) {
    const word = plan.words[wordIndex]!;
    if (word.start >= end) break;
    const from = Math.max(start, word.start);
    const to = Math.min(end, word.end);
    const step = (word.frequency * SINE_TABLE_SIZE) / plan.sampleRate;
    let noise = (plan.noiseSeed ^ Math.imul(wordIndex + 1, 0x9e3779b1)) >>> 0;
    for (let sample = from; sample < to; sample++) {
      const phase = (sample - word.start) * step;
      const tone =
        SINE_TABLE[Math.floor(phase) & (SINE_TABLE_SIZE - 1)]! +
        second * SINE_TABLE[Math.floor(phase * 2) & (SINE_TABLE_SIZE - 1)]! +
        third * SINE_TABLE[Math.floor(phase * 3) & (SINE_TABLE_SIZE - 1)]!;
      let value = tone * normalise * envelope(word, sample);
      const sinceStart = sample - word.start;
      if (sinceStart < CLICK_SAMPLES) {
        // xorshift32: the click sounds the same whichever block it falls in,
        // because its state restarts at the word and advances per sample.
        if (sample === from && from !== word.start) {
          for (let skipped = 0; skipped < sinceStart; skipped++) noise = nextNoise(noise);
        }
        noise = nextNoise(noise);
        value += ((noise / 4294967296) * 2 - 1) * CLICK_LEVEL * (1 - sinceStart / CLICK_SAMPLES);
      }
      output[sample - start] = Math.round(Math.max(-1, Math.min(1, value)) * 32767);
    }
  }
}

function nextNoise(state: number): number {
  let value = state || 1;
  value ^= value << 13;
  value >>>= 0;
  value ^= value >>> 17;
  value ^= value << 5;
  return value >>> 0;
}

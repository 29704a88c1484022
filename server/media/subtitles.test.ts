import { describe, expect, it } from 'vitest';
import { renderTranscript, type Transcript, type TranscriptSegment } from './subtitles.js';

function segment(id: number, start: number, end: number, text: string): TranscriptSegment {
  return { id, seek: 0, start, end, text, tokens: [50364, 1, 50414], temperature: 0, avg_logprob: -0.2, compression_ratio: 1.1, no_speech_prob: 0.01 };
}

const transcript: Transcript = {
  task: 'transcribe',
  language: 'english',
  duration: 3725.5,
  text: 'Hello there. Arrows --> are escaped!',
  segments: [segment(0, 0, 2.5, ' Hello there.'), segment(1, 2.5, 3725.4996, ' Arrows --> are escaped!')],
};

describe('renderTranscript', () => {
  it('renders json as the text alone', () => {
    expect(renderTranscript('json', transcript)).toEqual({ contentType: 'application/json', body: '{"text":"Hello there. Arrows --> are escaped!"}' });
  });

  it('renders text as the transcript and a newline', () => {
    expect(renderTranscript('text', transcript)).toEqual({ contentType: 'text/plain; charset=utf-8', body: 'Hello there. Arrows --> are escaped!\n' });
  });

  it('renders srt with numbered cues and comma milliseconds', () => {
    expect(renderTranscript('srt', transcript)).toEqual({
      contentType: 'text/plain; charset=utf-8',
      body: '1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n2\n00:00:02,500 --> 01:02:05,500\nArrows -> are escaped!\n\n',
    });
  });

  it('renders vtt with its header and dot milliseconds', () => {
    expect(renderTranscript('vtt', transcript)).toEqual({
      contentType: 'text/plain; charset=utf-8',
      body: 'WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello there.\n\n00:00:02.500 --> 01:02:05.500\nArrows -> are escaped!\n\n',
    });
  });

  it('renders verbose_json with task, language, duration, text and segments in that order', () => {
    const rendered = renderTranscript('verbose_json', { ...transcript, segments: transcript.segments.slice(0, 1) });
    expect(rendered.contentType).toBe('application/json');
    expect(rendered.body).toBe(
      '{"task":"transcribe","language":"english","duration":3725.5,"text":"Hello there. Arrows --> are escaped!","segments":[' +
        '{"id":0,"seek":0,"start":0,"end":2.5,"text":" Hello there.","tokens":[50364,1,50414],"temperature":0,"avg_logprob":-0.2,"compression_ratio":1.1,"no_speech_prob":0.01}]}',
    );
  });

  it('renders an empty transcript', () => {
    const empty: Transcript = { task: 'translate', language: 'english', duration: 1, text: '', segments: [] };
    expect(renderTranscript('srt', empty).body).toBe('');
    expect(renderTranscript('vtt', empty).body).toBe('WEBVTT\n\n');
    expect(renderTranscript('text', empty).body).toBe('\n');
  });
});

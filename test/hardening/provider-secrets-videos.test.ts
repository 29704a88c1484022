/**
 * An OpenAI-format video provider that echoes the credential it received: in
 * the video file it hands over (stored by the gateway, then served to the
 * client) and in a failed generation's error. The stored file has the key
 * masked byte for byte (same length, so ranges over it hold); the error the
 * client reads has it redacted.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { createVideoUpstream, type VideoUpstreamState } from '../upstreams/openai-videos-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import { CREDENTIAL_PLACEHOLDER, type UpstreamServer } from '../upstreams/upstream-server.js';
import { FAST_VIDEO_ENV, videoCatalog, waitForVideoStatus } from '../videos/video-support.js';

const SECRET = 'sk-video-echoed-0123456789abcdef';
const HEAD = Buffer.alloc(2000, 7);
const TAIL = Buffer.alloc(2000, 9);

let upstream: UpstreamServer;
let state: VideoUpstreamState;
let gateway: TestGateway;
let client: OpenAI;
let key: string;

beforeAll(async () => {
  const video = Buffer.concat([HEAD, Buffer.from(CREDENTIAL_PLACEHOLDER), TAIL]);
  const videoUpstream = createVideoUpstream({ video, thumbnail: Buffer.from(`thumb ${CREDENTIAL_PLACEHOLDER}`), spritesheet: Buffer.from([0xff, 0xd8, 0xff, 0xe0]) });
  state = videoUpstream.state;
  upstream = await startOpenAIUpstream({ routes: videoUpstream.routes, echoCredential: true });
  gateway = await startTestGateway({ catalog: videoCatalog(upstream.url), env: { ...FAST_VIDEO_ENV, VIDEO_UPSTREAM_KEY: SECRET }, config: { upstream: FAST_UPSTREAM } });
  ({ key } = await gateway.createAccountWithKey({ credits: 10 }));
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('a video provider echoing its key', () => {
  it('in the video file: stored and served with the key masked, the length kept', async () => {
    const created = await client.videos.create({ model: 'sora-test', prompt: 'a harbour', size: '1280x720', seconds: '4' });
    expect(await waitForVideoStatus(gateway, key, created.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    const leaked = `Bearer ${'*'.repeat(SECRET.length)}`;
    const whole = Buffer.from(await (await fetch(`${gateway.url}/v1/videos/${created.id}/content`, { headers: bearer(key) })).arrayBuffer());
    expect(whole.length).toBe(HEAD.length + leaked.length + TAIL.length);
    expect(whole.includes(SECRET)).toBe(false);
    expect(whole.subarray(HEAD.length, HEAD.length + leaked.length).toString('latin1')).toBe(leaked);
    const part = await fetch(`${gateway.url}/v1/videos/${created.id}/content`, { headers: { ...bearer(key), range: `bytes=${HEAD.length}-${HEAD.length + leaked.length - 1}` } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe(leaked);
    const thumbnail = await fetch(`${gateway.url}/v1/videos/${created.id}/content?variant=thumbnail`, { headers: bearer(key) });
    expect(await thumbnail.text()).toBe(`thumb ${leaked}`);
  });

  it("in a failed generation's error: the client reads it redacted", async () => {
    state.failNext = { code: 'internal_error', message: `generation failed for ${CREDENTIAL_PLACEHOLDER}` };
    const created = await client.videos.create({ model: 'sora-test', prompt: 'a storm', size: '1280x720', seconds: '4' });
    const failed = await waitForVideoStatus(gateway, key, created.id, ['completed', 'failed']);
    expect(failed.status).toBe('failed');
    const text = JSON.stringify(failed);
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(SECRET);
  });
});

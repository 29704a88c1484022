/**
 * `/v1/videos`: create a generation task (answered at once; the job runs in
 * the background, see video-worker.ts), list, get, download and delete —
 * each only for the account that owns the video.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { Executor } from '../../db/queries/executor.js';
import { countUnfinishedVideos, deleteVideo as deleteVideoRow, findVideo, insertVideo, listVideos as listVideoRows } from '../../db/queries/videos.queries.js';
import type { Video as VideoRow, VideoInputReferenceRecord } from '../../db/schema.js';
import type { BinaryAnswer } from '../answers.js';
import { GatewayError } from '../errors.js';
import { resolveModel, type OperationContext } from '../operations/routing.js';
import { JobMeter } from '../operations/job-meter.js';
import type { Video, VideoContentQuery, VideoCreateRequest, VideoDeleteResult, VideoList, VideoListQuery } from '../providers/openai/openai-videos.wire.js';
import type { UploadedFile } from '../uploads/upload-store.js';
import { newVideoId, toPublicVideo, videoAssetKey } from './video-object.js';
import { resolveVideoSeconds, resolveVideoSize } from './video-options.js';
import { assertFilesKept, videoFileKeys } from './video-retention.js';
import { byteRangeHeaders, chooseByteRange } from '../media/byte-range.js';

/** What an input reference may be (judged by its bytes): an image, or a video. */
const REFERENCE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'video/mp4', 'video/quicktime', 'video/webm']);
/** The largest reference sent as a JSON data URL (a multipart file has its own bound). */
const MAX_DATA_URL_BYTES = 16 * 1024 * 1024;

const UNFINISHED = new Set(['pending', 'processing']);
/** The `retry-after` of a create refused for a full queue: about the time a few jobs take. */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 30;

/** The video, if it is the caller's: 404 NOT_FOUND when there is none, 403 FORBIDDEN when another account's (GAPS.md). */
async function findOwnVideo(context: OperationContext, id: string): Promise<VideoRow> {
  const row = await findVideo(context.services.db, id);
  if (!row) throw new GatewayError('NOT_FOUND', `No video with id '${id}'.`);
  if (row.account_id !== context.auth.account.id) throw new GatewayError('FORBIDDEN', `You have no permission for the video '${id}'.`);
  return row;
}

/** A reference sent in JSON: a base64 `data:` URL only (the gateway fetches no URL of a client's choosing). */
function decodeDataUrl(reference: { image_url?: string; file_id?: string }): { bytes: Buffer; contentType: string } {
  if (reference.file_id !== undefined) {
    throw new GatewayError('INVALID_REQUEST', "Invalid value for 'input_reference.file_id': file ids are not supported; upload the file (multipart) or send a data URL.", {
      param: 'input_reference.file_id',
    });
  }
  const match = /^data:([\w.+-]+\/[\w.+-]+);base64,([A-Za-z0-9+/=\s]*)$/.exec(reference.image_url ?? '');
  if (!match) {
    throw new GatewayError('INVALID_REQUEST', "Invalid value for 'input_reference.image_url': expected a base64 data URL (data:image/png;base64,…).", {
      param: 'input_reference.image_url',
    });
  }
  const bytes = Buffer.from(match[2]!, 'base64');
  if (bytes.length > MAX_DATA_URL_BYTES) throw new GatewayError('PAYLOAD_TOO_LARGE', `The input reference is larger than ${MAX_DATA_URL_BYTES} bytes.`, { param: 'input_reference' });
  return { bytes, contentType: match[1]! };
}

/** Checks the reference by its bytes and copies it into the video storage (other instances send it to the provider). */
async function storeInputReference(context: OperationContext, videoId: string, reference: VideoCreateRequest['input_reference']): Promise<VideoInputReferenceRecord | undefined> {
  if (reference === undefined) return undefined;
  const { services } = context;
  let file: UploadedFile;
  let temporary = false;
  if (typeof reference === 'string') {
    file = services.uploads.get(reference, 'input_reference');
  } else {
    const decoded = decodeDataUrl(reference);
    file = await services.uploads.fromBuffer(decoded.bytes, { field: 'input_reference', filename: 'input_reference', contentType: decoded.contentType });
    temporary = true;
  }
  try {
    const detected = await fileTypeFromBuffer(file.head);
    if (!detected || !REFERENCE_TYPES.has(detected.mime)) {
      throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', "The 'input_reference' must be an image (PNG, JPEG, WebP) or a video (MP4, MOV, WebM).", { param: 'input_reference' });
    }
    const key = videoAssetKey(videoId, 'input_reference');
    await services.videoStorage.put(key, { path: file.path, contentType: detected.mime });
    return { key, filename: file.filename.slice(0, 200) || 'input_reference', contentType: detected.mime, size: file.size };
  } finally {
    if (temporary) await services.uploads.release([file.id]);
  }
}

/**
 * At most `VIDEO_MAX_QUEUED_PER_ACCOUNT` unfinished videos per account:
 * checked before the input reference is stored, and again in the create's
 * transaction under the account's lock (exact with several instances). Past
 * it a create answers 429: the jobs run at most `VIDEO_MAX_RUNNING_PER_ACCOUNT`
 * at a time, so a longer queue would only wait, holding credit.
 */
async function checkQueueRoom(db: Executor, context: OperationContext, lock: boolean): Promise<void> {
  const { maxQueuedPerAccount } = context.services.config.videos;
  const unfinished = await countUnfinishedVideos(db, context.auth.account.id, lock);
  if (unfinished >= maxQueuedPerAccount) {
    throw new GatewayError(
      'RATE_LIMITED',
      `This account already has ${unfinished} unfinished videos, the most it may have queued (${maxQueuedPerAccount}); create more once some have finished.`,
      { retryAfter: QUEUE_FULL_RETRY_AFTER_SECONDS },
    );
  }
}

/**
 * `POST /v1/videos`: validates against the model, holds the most the video
 * can cost (the model's per-second price × the requested seconds, at today's
 * discount) for the job, records the task and answers it as `pending`.
 */
export async function createVideo(context: OperationContext, body: VideoCreateRequest): Promise<Video> {
  const { services, auth } = context;
  const model = resolveModel(services, auth, body.model, '/v1/videos');
  const size = resolveVideoSize(model, body.size);
  const seconds = resolveVideoSeconds(model, body.seconds);
  const id = newVideoId();
  const meter = new JobMeter(services, '/v1/videos');
  const quote = meter.quote(auth, model, { inputTokens: 0, outputTokens: 0, seconds });
  await checkQueueRoom(services.db, context, false);
  const reference = await storeInputReference(context, id, body.input_reference);
  let row: VideoRow | undefined;
  try {
    await meter.hold(auth, id, quote, async (trx) => {
      await checkQueueRoom(trx, context, true);
      row = await insertVideo(trx, {
        id,
        account_id: auth.account.id,
        key_id: auth.key.id,
        request_id: context.requestId,
        model: model.id,
        prompt: body.prompt,
        size,
        seconds,
        discount_percentage: quote.discountPercentage,
        input_reference: reference ? JSON.stringify(reference) : null,
        duration: null,
        assets: null,
        provider_id: null,
        upstream_model: null,
        provider_job_id: null,
        error: null,
        run_after: new Date(),
        locked_by: null,
        locked_until: null,
        completed_at: null,
      });
    });
  } catch (error) {
    if (reference) await services.videoStorage.delete(reference.key).catch(() => undefined);
    throw error;
  }
  services.log.info('video.created', { video: id, model: model.id, requestId: context.requestId, held: quote.amount });
  services.videos.nudge();
  return toPublicVideo(row!);
}

/** `GET /v1/videos`: the caller's account's videos, newest first. */
export async function listVideos(context: OperationContext, query: VideoListQuery): Promise<VideoList> {
  const { rows, hasMore, total } = await listVideoRows(context.services.db, {
    accountId: context.auth.account.id,
    limit: query.limit,
    offset: (query.page - 1) * query.limit,
    order: query.order,
    afterId: query.after,
  });
  const data = rows.map(toPublicVideo);
  return {
    object: 'list',
    data,
    pagination: { page: query.page, limit: query.limit, total },
    has_more: hasMore,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  };
}

/** `GET /v1/videos/{id}`. */
export async function getVideo(context: OperationContext, id: string): Promise<Video> {
  return toPublicVideo(await findOwnVideo(context, id));
}

/**
 * `GET /v1/videos/{id}/content`: the stored file, with `Range` and
 * `If-Range` per RFC 9110 (media/byte-range.ts; the video id and variant are
 * its strong entity tag). Before completion — and for a failed video, which
 * never gets content — 409 VIDEO_NOT_READY; from its `expires_at` on, 404
 * VIDEO_EXPIRED (see video-retention.ts).
 */
export async function readVideoContent(context: OperationContext, query: VideoContentQuery): Promise<BinaryAnswer> {
  if (!context.canStream) {
    throw new GatewayError('INVALID_REQUEST', 'Video content is served on GET /v1/videos/{id}/content, not over /trpc.');
  }
  const row = await findOwnVideo(context, query.id);
  assertFilesKept(row);
  if (row.status !== 'completed' || !row.assets) {
    const message =
      row.status === 'failed' ? `The video '${row.id}' failed; it has no content.` : `The video '${row.id}' is ${row.status}; its content can be downloaded once it is completed.`;
    throw new GatewayError('VIDEO_NOT_READY', message);
  }
  const asset = row.assets[query.variant];
  // A finished video's files never change.
  const etag = `"${row.id}-${query.variant}"`;
  const choice = chooseByteRange(asset.size, { range: context.headers.range, ifRange: context.headers['if-range'] }, etag);
  const range = choice.kind === 'partial' ? { start: choice.start, end: choice.end } : undefined;
  const stored = await context.services.videoStorage.get(asset.key, range);
  if (!stored) throw new GatewayError('NOT_FOUND', `The ${query.variant} of the video '${row.id}' is missing from storage.`);
  return {
    kind: 'binary',
    contentType: asset.contentType,
    contentLength: range ? range.end - range.start + 1 : asset.size,
    status: range ? 206 : 200,
    body: stored.body,
    meta: { headers: byteRangeHeaders(choice, asset.size, etag) },
  };
}

/**
 * `DELETE /v1/videos/{id}`: the record goes for good (with the release of an
 * unfinished job's hold, in one transaction), the work stops here and at the
 * provider, and the files go from storage.
 */
export async function deleteVideo(context: OperationContext, id: string): Promise<VideoDeleteResult> {
  const { services } = context;
  const row = await findOwnVideo(context, id);
  let deleted: VideoRow | undefined;
  const model = services.catalog.get(row.model);
  await new JobMeter(services, '/v1/videos').release(row, model, { status: 499, errorCode: 'VIDEO_DELETED', provider: row.provider_id }, async (trx) => {
    deleted = await deleteVideoRow(trx, id, context.auth.account.id);
    // A finished video has no hold left; its usage row was written when it finished.
    return deleted !== undefined && UNFINISHED.has(deleted.status);
  });
  if (!deleted) throw new GatewayError('NOT_FOUND', `No video with id '${id}'.`);
  services.videos.abort(id);
  const upstream = services.videos.deploymentOfVideo(deleted);
  if (upstream) await services.videos.removeUpstream(upstream.deployment, upstream.jobRef);
  for (const key of videoFileKeys(deleted)) await services.videoStorage.delete(key);
  services.log.info('video.deleted', { video: id, status: deleted.status });
  return { success: true, message: `The video '${id}' and its files were deleted.`, id, object: 'video.deleted', deleted: true };
}

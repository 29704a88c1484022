import { jsonAnswer } from '../../server/answers.js';
import { checkedByProcedure, formFields, formFileIds, type CompatRoute, type RouteInput } from '../route.js';

/** Largest `input_reference` file (an image or a short video). */
const MAX_REFERENCE_BYTES = 64 * 1024 * 1024;

/** The create body: a multipart form (as the `openai` SDK sends it; the file named by its upload id) or JSON. */
function toCreateInput(input: RouteInput): Record<string, unknown> {
  if (Object.keys(input.form.fields).length === 0 && Object.keys(input.form.files).length === 0) return input.body;
  const [reference] = formFileIds(input.form, 'input_reference');
  return { ...formFields(input.form), ...(reference !== undefined ? { input_reference: reference } : {}) };
}

/** `/v1/videos` (SPEC "POST /videos" … "DELETE /videos/{id}"). */
export const VIDEO_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/videos',
    family: 'openai',
    body: 'multipart-or-json',
    multipart: { files: { input_reference: { maxFiles: 1, maxBytes: MAX_REFERENCE_BYTES } } },
    auth: 'key',
    summary: 'Create a video (generated in the background; poll GET /v1/videos/{id})',
    procedure: 'videos.create',
    invoke: async (caller, input) => jsonAnswer(await caller.videos.create(checkedByProcedure(toCreateInput(input)))),
  },
  {
    method: 'GET',
    path: '/v1/videos',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'List videos, newest first',
    procedure: 'videos.list',
    invoke: async (caller, input) => jsonAnswer(await caller.videos.list(checkedByProcedure(input.query))),
  },
  {
    method: 'GET',
    path: '/v1/videos/:id',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Get a video',
    procedure: 'videos.get',
    invoke: async (caller, input) => jsonAnswer(await caller.videos.get({ id: input.params.id ?? '' })),
  },
  {
    method: 'GET',
    path: '/v1/videos/:id/content',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Download a video (video/mp4, Range supported), or its thumbnail or spritesheet (?variant=)',
    procedure: 'videos.content',
    docs: { answers: { 'video/mp4': { schema: { type: 'string', format: 'binary' } }, 'image/*': { schema: { type: 'string', format: 'binary', description: 'the thumbnail or spritesheet (?variant=)' } } } },
    invoke: (caller, input) => caller.videos.content(checkedByProcedure({ ...input.query, id: input.params.id ?? '' })),
  },
  {
    method: 'DELETE',
    path: '/v1/videos/:id',
    family: 'openai',
    body: 'none',
    auth: 'key',
    summary: 'Delete a video and its files',
    procedure: 'videos.delete',
    invoke: async (caller, input) => jsonAnswer(await caller.videos.delete({ id: input.params.id ?? '' })),
  },
];

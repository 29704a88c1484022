import { imagesAnswerDoc } from '../answer-docs.js';
import { imageEditFormSchema } from '../../server/providers/openai/openai-images.wire.js';
import { assertImagePlan } from '../../server/images/image-requests.js';
import { EDIT_IMAGE_MAX_BYTES, EDIT_MASK_MAX_BYTES } from '../../server/images/image-edits.service.js';
import { checkedByProcedure, formFields, formFileIds, type CompatRoute } from '../route.js';

/** Image generation, edits, and the signed links to generated images. */
export const IMAGES_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/images/generations',
    streams: true,
    family: 'openai',
    body: 'json',
    auth: 'key',
    guard: (auth) => assertImagePlan(auth.account.plan),
    summary: 'Generate images (not on the free plan)',
    procedure: 'images.generate',
    docs: { answer: imagesAnswerDoc },
    invoke: (caller, input) => caller.images.generate(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/images/edits',
    streams: true,
    family: 'openai',
    body: 'multipart',
    // `image` and `image[]` share the limit of 16 images (the procedure counts both); the single-image form's 4 MB is checked there too.
    multipart: {
      files: {
        image: { maxFiles: 16, maxBytes: EDIT_IMAGE_MAX_BYTES },
        'image[]': { maxFiles: 16, maxBytes: EDIT_IMAGE_MAX_BYTES },
        mask: { maxFiles: 1, maxBytes: EDIT_MASK_MAX_BYTES },
      },
      maxFields: 32,
      maxFieldBytes: 128 * 1024,
    },
    auth: 'key',
    // A free account is refused from its key alone: its upload is never read or stored.
    guard: (auth) => assertImagePlan(auth.account.plan),
    summary: 'Edit images (multipart; not on the free plan)',
    procedure: 'images.edit',
    docs: { form: imageEditFormSchema, answer: imagesAnswerDoc },
    invoke: (caller, input) =>
      caller.images.edit(checkedByProcedure({ ...formFields(input.form), image: formFileIds(input.form, 'image'), mask: formFileIds(input.form, 'mask')[0] })),
  },
  {
    method: 'GET',
    path: '/v1/images/files/:id',
    family: 'openai',
    body: 'none',
    auth: 'none',
    summary: 'A generated image by its signed link (no API key)',
    procedure: 'images.file',
    docs: { answers: { 'image/*': { schema: { type: 'string', format: 'binary' } } } },
    invoke: (caller, input) => caller.images.file({ id: input.params.id ?? '', expires: input.query.expires ?? '', signature: input.query.signature ?? '' }),
  },
];

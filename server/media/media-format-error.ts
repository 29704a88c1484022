/**
 * Why a media file was refused:
 * - `unrecognized`: the bytes are not of the expected format at all (a text file named `.png`);
 * - `corrupt`: the format is recognised but the file is truncated or inconsistent;
 * - `unsupported`: a valid file using a feature we do not handle;
 * - `too_large`: valid, but its decoded size is over the limit the caller set.
 */
export type MediaFormatErrorReason = 'unrecognized' | 'corrupt' | 'unsupported' | 'too_large';

/**
 * A media file (PNG, audio) that cannot be used. Thrown by the parsers in
 * `server/media/`; callers map it to `415 UNSUPPORTED_MEDIA_TYPE` or
 * `400 INVALID_REQUEST` as the route requires. The message never contains
 * file contents.
 */
export class MediaFormatError extends Error {
  override readonly name = 'MediaFormatError';
  readonly reason: MediaFormatErrorReason;

  constructor(reason: MediaFormatErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.reason = reason;
  }
}

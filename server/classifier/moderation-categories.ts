/**
 * The moderation categories of the Moderation result (SPEC "Moderation result"): the keys of
 * both `categories` and `category_scores`, in the order the SPEC lists them.
 */
export const MODERATION_CATEGORIES = [
  'hate',
  'hate/threatening',
  'harassment',
  'harassment/threatening',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;

/** One moderation category key. */
export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

/** Each subcategory and its parent: a subcategory's score never exceeds its parent's. */
export const CATEGORY_PARENTS: Readonly<Partial<Record<ModerationCategory, ModerationCategory>>> = {
  'hate/threatening': 'hate',
  'harassment/threatening': 'harassment',
  'self-harm/intent': 'self-harm',
  'self-harm/instructions': 'self-harm',
  'sexual/minors': 'sexual',
  'violence/graphic': 'violence',
};

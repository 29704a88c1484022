/**
 * Moderations on the offline `mock` provider: the gateway's own documented
 * classifier (`server/classifier/classifier.ts`), one verdict per input. The
 * texts of a multimodal input are classified together; its images are not
 * classified, which `category_applied_input_types` says (only `text`).
 */
import { nextId } from '../../ids.js';
import { classifyText } from '../../classifier/classifier.js';
import { MODERATION_CATEGORIES, type ModerationCategory } from '../../classifier/moderation-categories.js';
import type { ModerationResultItem } from '../openai/openai-moderations.wire.js';
import type { ModerationsAdapter } from '../types.js';

function appliedInputTypes(hasText: boolean): Record<ModerationCategory, string[]> {
  return Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, hasText ? ['text'] : []])) as Record<ModerationCategory, string[]>;
}

export const mockModerationsAdapter: ModerationsAdapter = {
  async moderate(_transport, _connection, call) {
    const results = call.texts.map((texts): ModerationResultItem => {
      const verdict = classifyText(texts.join('\n'));
      return call.multimodal ? { ...verdict, category_applied_input_types: appliedInputTypes(texts.length > 0) } : verdict;
    });
    return {
      body: { id: nextId('modr-'), model: String(call.body.model), results },
      ignored: call.imageItems.map((index) => `input[${index}].image_url`),
    };
  },
};

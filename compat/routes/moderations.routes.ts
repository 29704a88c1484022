import { moderationAnswerDoc } from '../answer-docs.js';
import { checkedByProcedure, type CompatRoute } from '../route.js';

export const MODERATIONS_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/moderations',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Classify text for moderation',
    procedure: 'moderations.create',
    docs: { answer: moderationAnswerDoc },
    invoke: (caller, input) => caller.moderations.create(checkedByProcedure(input.body)),
  },
];

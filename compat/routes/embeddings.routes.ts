import { embeddingsAnswerDoc } from '../answer-docs.js';
import { checkedByProcedure, type CompatRoute } from '../route.js';

export const EMBEDDINGS_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/embeddings',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Create embeddings (billed per input token)',
    procedure: 'embeddings.create',
    docs: { answer: embeddingsAnswerDoc },
    invoke: (caller, input) => caller.embeddings.create(checkedByProcedure(input.body)),
  },
];

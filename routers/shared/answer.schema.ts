import { z } from 'zod';

/**
 * The declared output of a procedure whose answer is a typed value the
 * compat layer writes (JSON, a stream of typed events, bytes): its type is
 * the procedure's output type for every caller; it is not re-validated at
 * run time (the answer is built by the gateway's own code, and a stream
 * cannot be checked before it is read).
 */
export function answerOf<Answer>() {
  return z.custom<Answer>();
}

/**
 * `npx tsx bench/trpc-call.bench.ts` — µs per call of the tRPC path a compat request takes
 * (createCaller, the API-key middleware with `ctx.auth` already set, zod input, the output
 * check of an answer procedure, the resolver),
 * with a resolver that does nothing, so that only the call machinery is measured.
 */
import { z } from 'zod';
import type { AuthContext } from '../server/auth/authenticate.js';
import { createContextInner } from '../server/context.js';
import { apiKeyProcedure } from '../server/procedures/index.js';
import type { Services } from '../server/services.js';
import { createCallerFactory, router } from '../server/trpc.js';

const bench = router({
  chat: router({
    completions: apiKeyProcedure.input(z.object({ model: z.string(), messages: z.array(z.object({ role: z.string(), content: z.string() })) }).passthrough()).output(z.custom<number>()).mutation(({ ctx, input }) => ctx.auth.account.id.length + input.model.length),
  }),
});
const createCaller = createCallerFactory(bench);
const auth = { account: { id: 'acct_bench' } } as unknown as AuthContext;
const services = {} as Services;
const signal = new AbortController().signal;
const body = { model: 'bench-model', messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 16 };

async function run(count: number): Promise<number> {
  // CPU time, not wall time: the machine may be shared, and a time slice lost is not the path's cost.
  const began = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const context = createContextInner(services, { auth, requestId: 'r', signal });
    await createCaller(context).chat.completions(body);
  }
  const used = process.cpuUsage(began);
  return (used.user + used.system) / count;
}

await run(20_000);
const samples: number[] = [];
for (let round = 0; round < 7; round++) samples.push(await run(50_000));
samples.sort((a, b) => a - b);
process.stdout.write(`tRPC call path: median ${samples[3]!.toFixed(2)} CPU-µs per call (min ${samples[0]!.toFixed(2)}, max ${samples[6]!.toFixed(2)}; 7 × 50,000 calls)\n`);

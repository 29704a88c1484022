import { loadConfig } from './config.js';
import { ConfigError } from './config.schema.js';
import { startGateway } from './gateway.js';
import { reloadCatalog } from './catalog-reload.js';
import { ensureDashboardBundle } from './dashboard/bundle.js';

/** Process entry: `npm start`. */
async function main(): Promise<void> {
  // SIGHUP's default is to end the process: one sent while the gateway starts (a deploy tool, an
  // operator's reload racing a restart) is remembered and carried out once it serves.
  let reloadAfterStart = false;
  const remember = () => (reloadAfterStart = true);
  process.on('SIGHUP', remember);
  const config = loadConfig();
  // npm ci && npm start: the page is built here when missing or older than its sources.
  await ensureDashboardBundle((message) => process.stdout.write(`${message}\n`));
  const gateway = await startGateway(config);
  // A supervisor that spawned this process with an IPC channel learns where it listens (PORT=0 included).
  process.send?.({ event: 'gateway.listening', url: gateway.url });
  if (gateway.demoKey) {
    process.stdout.write(
      [
        '',
        'Demo account created. Its API key (shown once):',
        `  ${gateway.demoKey}`,
        'Try it:',
        `  curl ${gateway.url}/v1/chat/completions -H "Authorization: Bearer ${gateway.demoKey}" -H "Content-Type: application/json" -d '{"model":"mock-chat","messages":[{"role":"user","content":"Hello!"}]}'`,
        ...(gateway.demoSignIn
          ? ['Dashboard sign-in (shown once; change it with `npm run admin -- users:reset-password`):', `  ${gateway.url}/dashboard`, `  email:    ${gateway.demoSignIn.email}`, `  password: ${gateway.demoSignIn.password}`]
          : []),
        '',
      ].join('\n') + '\n',
    );
  }
  let signals = 0;
  const shutdown = (signal: string) => {
    signals++;
    if (signals > 1) process.exit(1);
    gateway.services.log.info('gateway.stopping', { signal });
    gateway
      .stop()
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  // SIGHUP: read GATEWAY_CONFIG again and give every instance on the database the new catalog.
  const reload = () => {
    reloadCatalog(gateway.services, 'sighup').catch(() => {
      // reloadCatalog logged why; the running catalog stays.
    });
  };
  process.off('SIGHUP', remember);
  process.on('SIGHUP', reload);
  if (reloadAfterStart) reload();
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: Error) => {
  if (error instanceof ConfigError) {
    // A bad setting, each bad variable named: exit 78 (EX_CONFIG), which a supervisor can tell from a crash.
    process.stderr.write(`${error.message}\n`);
    process.exit(ConfigError.EXIT_CODE);
  }
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', event: 'gateway.start_failed', message: error.message })}\n`);
  process.exit(1);
});

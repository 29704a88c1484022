import { ensureDashboardBundle } from './bundle.js';

/** `npm run build:dashboard`: builds dashboard/ into dashboard/dist unless the bundle is current. */
ensureDashboardBundle((message) => process.stdout.write(`${message}\n`))
  .then((built) => {
    if (!built) process.stdout.write('The dashboard bundle is current.\n');
  })
  .catch((error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  });

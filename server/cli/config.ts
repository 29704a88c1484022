import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CatalogConfigError, findUnsetSecrets, loadCatalogSource } from '../catalog/catalog.js';
import { loadConfig } from '../config.js';
import { ConfigError, readmeTables, withReadmeTables } from '../config.schema.js';
import { PROJECT_ROOT } from '../project-root.js';

const HELP = `Usage: npm run config -- <command>

  --check            validate this environment (every variable of server/config.schema.ts)
                     and the catalog it names (GATEWAY_CONFIG, else the demo catalog),
                     without starting the gateway; exit 0 when both are good, 78 otherwise
  --readme           print the README's tables of environment variables, from the schema
  --readme --write   rewrite those tables in README.md
`;

/** `npm run config -- --check | --readme [--write]`. */
function main(argv: string[]): number {
  if (argv.includes('--check')) return check();
  if (argv.includes('--readme')) {
    if (argv.includes('--write')) {
      const file = path.join(PROJECT_ROOT, 'README.md');
      writeFileSync(file, withReadmeTables(readFileSync(file, 'utf8')));
      process.stdout.write(`Wrote the environment tables of ${file}.\n`);
    } else {
      const tables = readmeTables();
      process.stdout.write(`${tables.gateway}\n\n${tables.videos}\n`);
    }
    return 0;
  }
  process.stdout.write(HELP);
  return argv.includes('--help') || argv.includes('-h') ? 0 : 64;
}

function check(): number {
  const problems: string[] = [];
  let catalogFile: string | undefined;
  try {
    catalogFile = loadConfig(process.env).catalogFile;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(error.message);
    // The catalog is still checked when only other variables are wrong.
    catalogFile = process.env.GATEWAY_CONFIG || undefined;
  }
  try {
    const catalog = loadCatalogSource(catalogFile);
    const unset = findUnsetSecrets(catalog, process.env);
    process.stdout.write(`Catalog ${catalogFile ?? '(demo catalog)'}: ${catalog.providers.length} providers, ${catalog.models.length} models.\n`);
    for (const { provider, variable } of unset) process.stdout.write(`  warning: provider ${provider} reads ${variable}, which is unset (its calls will fail)\n`);
  } catch (error) {
    if (!(error instanceof CatalogConfigError)) throw error;
    problems.push(`Invalid catalog:\n  ${error.message}`);
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    return ConfigError.EXIT_CODE;
  }
  process.stdout.write('Configuration is valid.\n');
  return 0;
}

process.exitCode = main(process.argv.slice(2));

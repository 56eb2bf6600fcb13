/**
 * The API reports in api/: one per package entry (package.json "exports"), written by
 * @microsoft/api-extractor from the built declarations (dist/, `npm run build`), so a change to
 * the public surface shows as a diff in review.
 *
 *   npm run api          builds, then rewrites the reports (commit them with the change)
 *   npm run api:check    builds, then fails when a report differs from what is committed
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig, ExtractorLogLevel, type IConfigFile } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');

/** Each entry of package.json "exports" with its declarations: `dsh/node` → dist/src/node.d.ts. */
function entries(): Array<{ name: string; types: string }> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: Record<string, string | { types?: string }> };
  return Object.entries(pkg.exports)
    .filter((e): e is [string, { types: string }] => typeof e[1] === 'object' && typeof e[1].types === 'string')
    .map(([key, target]) => ({ name: key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`, types: join(root, target.types) }));
}

/** `dsh/node` → `dsh-node` (the report is api/dsh-node.api.md). */
const reportName = (entry: string) => entry.replace(/\//g, '-');

const quiet = { logLevel: ExtractorLogLevel.None, addToApiReportFile: false };

function configOf(entry: { name: string; types: string }, tempFolder: string): IConfigFile {
  return {
    projectFolder: root,
    mainEntryPointFilePath: entry.types,
    compiler: {
      // The declarations alone, as a user's compiler sees them.
      overrideTsconfig: {
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'DOM'], types: ['node'], strict: true, skipLibCheck: true, jsx: 'react-jsx' },
        files: [entry.types],
      },
    },
    apiReport: { enabled: true, reportFolder: join(root, 'api'), reportTempFolder: tempFolder, reportFileName: reportName(entry.name), includeForgottenExports: false },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        // dsh does not tag releases (@public/@beta): everything an entry exports is public.
        'ae-missing-release-tag': quiet,
        // A type an entry uses but leaves to another entry (`dsh` uses dsh/machines' `CallStages`):
        // TypeDoc checks that every such type is documented somewhere (`npm run docs`).
        'ae-forgotten-export': quiet,
      },
      // TypeDoc checks the comments (`npm run docs`, warnings are errors).
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
    },
  };
}

const tempFolder = join(root, 'test-artifacts', 'api');
mkdirSync(tempFolder, { recursive: true });
if (update) mkdirSync(join(root, 'api'), { recursive: true });
const changed: string[] = [];
let failed = false;
for (const entry of entries()) {
  const config = ExtractorConfig.prepare({ configObject: configOf(entry, tempFolder), configObjectFullPath: undefined, packageJsonFullPath: join(root, 'package.json') });
  const result = Extractor.invoke(config, { localBuild: update, showVerboseMessages: false, showDiagnostics: false });
  if (result.apiReportChanged) changed.push(`api/${reportName(entry.name)}.api.md`);
  if (result.errorCount > 0) failed = true;
}
if (changed.length && !update) {
  console.error(`The public API changed: ${changed.join(', ')} differ from what the entries export.\nReview the change, then run \`npm run api\` and commit the reports.`);
  process.exit(1);
}
if (failed) process.exit(1);
console.log(update ? `API reports written: ${changed.length ? changed.join(', ') : 'none changed'}` : 'API reports match the entries.');

/**
 * The public surface with its signatures: one API Extractor report per entry of the built package
 * (`test/package/api/<entry>.api.md`), read from its declarations (`dist/**\/index.d.ts`). Where
 * `api.txt` lists names and kinds, these show every parameter, option field and return type, so a
 * changed signature shows in review. The test regenerates each report into a temporary folder
 * and fails when it differs from the checked-in one.
 *
 * Types an entry uses without exporting show as `// Warning: (ae-forgotten-export)` lines in its
 * report: a user sees their name but cannot import them.
 *
 * To change the surface on purpose: `npm run api:update` (which builds, then rewrites both
 * `api.txt` and these reports), and commit the reports with the change.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  type IConfigFile,
} from '@microsoft/api-extractor';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const reportFolder = fileURLToPath(new URL('./api', import.meta.url));
const UPDATE = 'npm run api:update';

/** Each entry of package.json `exports`, by the name of its report. */
const entries = {
  core: 'dist/index.d.ts',
  server: 'dist/server/index.d.ts',
  redis: 'dist/redis/index.d.ts',
  undici: 'dist/undici/index.d.ts',
} as const;
type Entry = keyof typeof entries;

const temp = mkdtempSync(join(tmpdir(), 'limited-client-api-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/**
 * Runs API Extractor on `entry`'s declarations and returns the report it wrote, with the
 * problems that are not in the report. Its messages go into the report (`addToApiReportFile`)
 * rather than to the console; release tags (`@public`, `@beta`) are not used by this package.
 */
function generate(entry: Entry): { report: string; problems: string[] } {
  const file = join(root, entries[entry]);
  const configObject: IConfigFile = {
    projectFolder: root,
    mainEntryPointFilePath: file,
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2023', 'dom', 'dom.iterable'],
          types: ['node'],
          strict: true,
          skipLibCheck: true,
        },
        files: [file],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: `${entry}.api.md`,
      reportFolder: temp,
      reportTempFolder: temp,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Error } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // Already in the report as `// (undocumented)`, and api.test.ts checks the exports' docs.
        'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        // Links to members and to internals (`{@link sleep}`), which the report cannot follow.
        'ae-unresolved-link': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      },
      // TSDoc's grammar is stricter than the doc comments' Markdown (`@default`, `<`, `{`).
      tsdocMessageReporting: {
        default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      },
    },
  };
  const config = ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const problems: string[] = [];
  Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      if (message.logLevel === ExtractorLogLevel.Error)
        problems.push(message.formatMessageWithLocation(root));
      message.handled = true;
    },
  });
  const report = readFileSync(join(temp, `${entry}.api.md`), 'utf8');
  // The warnings API Extractor cannot attach to a declaration end the report with their place in
  // the build (`dist/options-B8A9kpYn.d.ts:214:9 - `): a chunk's hash and a line move with any
  // edit, so the place goes and the warning stays.
  return { report: report.replace(/^\/\/ dist\/\S+:\d+:\d+ - /gm, '// '), problems };
}

describe('the API report', () => {
  it.each(Object.keys(entries) as Entry[])(
    'of %s is the one in test/package/api/',
    (entry) => {
      const { report, problems } = generate(entry);
      expect(problems, 'API Extractor could not read the declarations').toEqual([]);
      const checkedIn = join(reportFolder, `${entry}.api.md`);
      if (process.env.UPDATE_API) writeFileSync(checkedIn, report);
      let expected = '';
      try {
        expected = readFileSync(checkedIn, 'utf8');
      } catch {
        // A missing report reads as empty: the comparison below fails with the update command.
      }
      expect(
        report,
        `The signatures of ${entries[entry]} differ from test/package/api/${entry}.api.md. If ` +
          `the change is on purpose, run \`${UPDATE}\` and commit the reports (and the README ` +
          `section that documents it); otherwise restore the signature.`,
      ).toBe(expected);
    },
    60_000,
  );
});

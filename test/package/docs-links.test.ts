/**
 * The documentation's links, and the README's shape. Every relative link in `README.md`,
 * `CONTRIBUTING.md` and `docs/*.md` must reach a file or folder of the repository, and every
 * anchor (`#how-a-request-flows`, `options.md#limit-options`) a heading of its target, as GitHub
 * spells heading anchors. Links inside code blocks and inline code are not links. Links to other
 * sites are not fetched (the tests run offline).
 *
 * The README's Quick start holds exactly its two commands (`.ci/run` runs the second, unchanged),
 * and every page under docs/ is linked from the README.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  type Link,
  links as linksIn,
  problem as problemIn,
  prose,
  slug,
} from './markdown-links.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const docs = readdirSync(join(root, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const pages = ['README.md', 'CONTRIBUTING.md', ...docs];

const read = (file: string) => readFileSync(join(root, file), 'utf8');
const links = (file: string) => linksIn(root, file);
const problem = (link: Link) => problemIn(root, link);

describe('documentation links', () => {
  it('finds the pages it checks, and links in each', () => {
    expect(docs.length).toBeGreaterThanOrEqual(8);
    for (const page of ['README.md', 'CONTRIBUTING.md', 'docs/options.md']) {
      expect(links(page).length, page).toBeGreaterThan(10);
    }
  });

  for (const page of pages) {
    it(`${page}: every relative link and anchor reaches its target`, () => {
      const broken = links(page)
        .map((link) => ({ link, why: problem(link) }))
        .filter((b) => b.why !== undefined)
        .map(({ link, why }) => `${link.file}:${link.line}: ${why}`);
      expect(broken).toEqual([]);
    });
  }

  it('checks what it claims: a missing file, a missing anchor and a link in code', () => {
    expect(problem({ file: 'README.md', line: 1, target: 'docs/nothing-here.md' })).toMatch(
      /no such file/,
    );
    expect(problem({ file: 'docs/options.md', line: 1, target: '#no-such-heading' })).toMatch(
      /no heading/,
    );
    expect(problem({ file: 'docs/options.md', line: 1, target: 'redis.md#fail-modes' })).toBe(
      undefined,
    );
    expect(problem({ file: 'docs/options.md', line: 1, target: '../../outside.md' })).toMatch(
      /leaves the repository/,
    );
    expect(slug("Staying under the server's limits")).toBe('staying-under-the-servers-limits');
    expect(slug('Partitions: routes that a host limits apart')).toBe(
      'partitions-routes-that-a-host-limits-apart',
    );
    expect(slug('`RedisStore` options')).toBe('redisstore-options');
    expect(prose('a\n```ts\n[x](nowhere.md)\n```\nb')).toEqual(['a', '', '', '', 'b']);
  });

  it('every page under docs/ is linked from the README', () => {
    const linked = new Set(
      links('README.md')
        .map((l) => l.target.split('#')[0])
        .filter((t) => t?.startsWith('docs/')),
    );
    expect(docs.filter((page) => !linked.has(page))).toEqual([]);
  });
});

describe('README', () => {
  const readme = read('README.md');

  it('opens with the install command and an example before anything else', () => {
    const firstHeading = readme.indexOf('\n## ');
    const top = readme.slice(0, firstHeading);
    expect(top).toContain('npm install limited-client');
    expect(top).toMatch(/```ts\nimport \{ LimitedClient \} from 'limited-client';/);
    expect(readme.slice(firstHeading + 1).startsWith('## Quick start\n')).toBe(true);
  });

  it('has the Quick start with exactly its two commands, the second the one .ci/run runs', () => {
    const start = readme.indexOf('## Quick start\n');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toEqual([
      'npm ci && npm run demo   # the main job\n' +
        'npm ci && npm test       # the whole test suite (lint, type check, build, tests)\n',
    ]);
    const ci = read('.ci/run');
    expect(ci.trimEnd().endsWith('\nnpm ci && npm test')).toBe(true);
  });
});

/**
 * Relative links in markdown, as GitHub renders them: the prose outside code, the anchors a page
 * offers, its inline links, and what is wrong with one. Shared by the repository's link check
 * (docs-links.test.ts) and the installed package's (install.test.ts); every function takes the
 * folder the pages are read from.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** The text outside fenced code blocks, line by line (fenced lines become empty). */
export function prose(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker !== undefined && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return '';
    }
    return fence === undefined ? line : '';
  });
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors a page offers: one per heading, repeated ones numbered (`-1`, `-2`) as GitHub does. */
export function anchors(root: string, file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(readFileSync(join(root, file), 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** A link of a page: the page (relative to the root), its line (from 1) and its target. */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/** Every inline link `[text](target)` and image of a page, outside code. */
export function links(root: string, file: string): Link[] {
  const out: Link[] = [];
  prose(readFileSync(join(root, file), 'utf8')).forEach((text, i) => {
    const withoutCode = text.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    // The text may itself hold inline code (blanked above) or nested brackets; the target has no
    // spaces (a title after it is allowed).
    for (const match of withoutCode.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ file, line: i + 1, target: match[1] as string });
    }
  });
  return out;
}

/** The path a relative link reaches, relative to the root (`undefined` for another site's URL). */
export function resolvedPath(link: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(link.target)) return undefined; // https:, mailto: ...
  const hash = link.target.indexOf('#');
  const path = hash === -1 ? link.target : link.target.slice(0, hash);
  return path === '' ? link.file : join(dirname(link.file), path);
}

/** What is wrong with a link, or `undefined` when it reaches its target. */
export function problem(root: string, link: Link): string | undefined {
  const { target } = link;
  const path = resolvedPath(link);
  if (path === undefined) return undefined;
  const resolved = relative(root, join(root, path));
  if (resolved.startsWith('..')) return `${target} leaves the repository`;
  if (!existsSync(join(root, resolved))) return `${target}: no such file (${resolved})`;
  const hash = target.indexOf('#');
  if (hash === -1) return undefined;
  const anchor = decodeURIComponent(target.slice(hash + 1));
  if (!resolved.endsWith('.md')) return `${target}: an anchor into a file that is not markdown`;
  if (!anchors(root, resolved).has(anchor))
    return `${target}: no heading "#${anchor}" in ${resolved}`;
  return undefined;
}

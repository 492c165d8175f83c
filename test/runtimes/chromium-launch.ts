/**
 * Debian's Chromium driven by `playwright-core`, as the runtime matrix, the dashboard's test and the
 * dashboard's picture use it: where the binary is, and one way to launch it headless.
 *
 * @module
 */
import type { Browser } from 'playwright-core';
import { findBinary } from './harness.js';

/** Where Chromium may be: `$LIMITED_CLIENT_CHROMIUM`, then the usual Debian and Chrome paths. */
export const CHROMIUM_CANDIDATES: readonly string[] = [
  process.env.LIMITED_CLIENT_CHROMIUM ?? '',
  // Debian's /usr/bin/chromium is a shell wrapper around this binary.
  '/usr/lib/chromium/chromium',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
].filter((p) => p !== '');

/** What this machine offers: a runnable Chromium and playwright-core, or why not. */
export type ChromiumHere =
  | { ok: true; path: string; version: string; playwright: typeof import('playwright-core') }
  | { ok: false; why: string };

/** Looks for a runnable Chromium and loads playwright-core (see {@link ChromiumHere}). */
export async function chromiumHere(): Promise<ChromiumHere> {
  const binary = await findBinary(CHROMIUM_CANDIDATES);
  if (binary === undefined) {
    const looked = CHROMIUM_CANDIDATES.join(', ');
    return {
      ok: false,
      why: `no runnable Chromium (looked for ${looked}); apt-get install chromium`,
    };
  }
  try {
    const playwright = await import('playwright-core');
    return { ok: true, ...binary, playwright };
  } catch (error) {
    return { ok: false, why: `playwright-core does not load: ${(error as Error).message}` };
  }
}

/** Launches Chromium headless, as root in a container can run it. */
export function launchChromium(here: ChromiumHere & { ok: true }): Promise<Browser> {
  return here.playwright.chromium.launch({
    executablePath: here.path,
    headless: true,
    // Root (CI) cannot use Chromium's sandbox; /dev/shm may be small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    timeout: 60_000,
  });
}

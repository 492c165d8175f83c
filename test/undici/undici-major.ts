/**
 * Which undici the undici tests run on: undici 7 (the `undici` dev dependency), or undici 8 when
 * `undici8.test.ts` runs them under Node 22 with `LIMITED_CLIENT_UNDICI=8` (vitest.config.ts then
 * resolves `undici` to the `undici8` alias). The few places where the two differ ask here.
 */

import type { Dispatcher } from 'undici';
import * as undici from 'undici';

/** Whether the tests were asked to run on undici 8. */
export const ASKED_FOR_UNDICI_8 = process.env.LIMITED_CLIENT_UNDICI === '8';

/** The `Dispatcher1Wrapper` of undici 8 (absent from undici 7). */
const Wrapper = (undici as Record<string, unknown>).Dispatcher1Wrapper as
  | (new (
      dispatcher: Dispatcher,
    ) => Dispatcher)
  | undefined;

/** The major of the undici loaded: 8 has `Dispatcher1Wrapper`, 7 has not. */
export const UNDICI_MAJOR: 7 | 8 = Wrapper === undefined ? 7 : 8;

/**
 * `dispatcher` as Node's built-in fetch (and undici 7's legacy handlers) can use it: undici 8
 * dispatchers speak only the new handler API, so they go through `Dispatcher1Wrapper`, as undici
 * 8's migration guide says; undici 7's `compose()` converts legacy handlers itself.
 */
export function forLegacyHandlers(dispatcher: Dispatcher): Dispatcher {
  return Wrapper === undefined ? dispatcher : new Wrapper(dispatcher);
}

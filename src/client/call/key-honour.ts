/**
 * Whether a host honours idempotency keys (a repeat with the key gets the first answer; the side
 * effect runs once), which decides whether a write may be retried after an answer that does not
 * prove it unprocessed. Declared per host (`idempotency.honoured`), else known from a short list of
 * providers, else learned from the host's own answers.
 *
 * @module
 */
import { HostMatcher } from '../host/host-match.js';

/**
 * Providers whose API references document that they deduplicate requests by an `Idempotency-Key`
 * header of that name: Stripe ("Idempotent requests"), Adyen ("API idempotency"; its hosts under
 * adyen.com: an endpoint under another domain needs `honoured: true`), GoCardless ("Idempotency
 * keys"). Kept short on purpose: a host listed wrongly would have its writes repeated.
 */
const KNOWN_PROVIDERS = new HostMatcher({
  'api.stripe.com': true,
  '*.adyen.com': true,
  'api.gocardless.com': true,
});

/** Whether `hostname` is a listed provider and the key goes in its `Idempotency-Key` header. */
export function listedProvider(header: string, hostname: string): boolean {
  return (
    header.toLowerCase() === 'idempotency-key' &&
    KNOWN_PROVIDERS.match(hostname, hostname).length > 0
  );
}

/**
 * Whether an answer shows that its server honours the request's key: it says it replayed a stored
 * answer (`Idempotent-Replayed`, sent by Stripe and the mock server on a replay), or it echoes the
 * request's key in the key's own header (Stripe does on every answer).
 */
export function answerHonoursKey(headers: Headers, header: string, key: string): boolean {
  return headers.has('idempotent-replayed') || headers.get(header) === key;
}

/**
 * Marks the host as honouring idempotency keys when `response` shows it does (it echoes the
 * call's `key`), unless the caller declared either way or it is known already.
 */
export function learnKeys(
  host: {
    wide: { keysHonoured: boolean };
    policy: { idempotency?: { header: string; honoured: boolean | undefined } };
  },
  key: string | undefined,
  response: Response,
): void {
  const idem = host.policy.idempotency;
  const { wide } = host;
  if (wide.keysHonoured || key === undefined || idem === undefined || idem.honoured !== undefined)
    return;
  if (answerHonoursKey(response.headers, idem.header, key)) wide.keysHonoured = true;
}

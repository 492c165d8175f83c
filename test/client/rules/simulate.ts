/**
 * A deterministic fake-time simulation of the client's rules against one of the mock server's
 * algorithms, with the server's own header writer and the client's own parser in between: what
 * `LimitedClient` does against the mock server, without HTTP, sockets or a clock.
 *
 * Calls wait in one FIFO line, at most `concurrency` in flight, as the pipeline's admission queue
 * does; each is admitted through the host's rules (`harness.ts`), reaches the server `latencyMs`
 * later, is decided by the algorithm (`decide`), waits its turn in a leaky bucket, and its answer
 * (the IETF fields as `rateLimitFields` writes them, `Retry-After` on a 429) comes back
 * `latencyMs` later to be settled. A refused call goes back to the front of the line. A
 * concurrency limit holds each slot for the handler's `serviceMs` and gives it back when the answer
 * leaves; the client settles the body's end as the answer arrives. Time only
 * moves to the next event: an answer, or the moment a rule said the line may move.
 */

import type { Ticket } from '../../../src/client/rules/contract.js';
import { concurrencyLimit } from '../../../src/server/algorithms/concurrency-limit.js';
import { fixedWindow } from '../../../src/server/algorithms/fixed-window.js';
import { gcra } from '../../../src/server/algorithms/gcra.js';
import { leakyBucket } from '../../../src/server/algorithms/leaky-bucket.js';
import { type AlgorithmLogic, decide } from '../../../src/server/algorithms/logic.js';
import { slidingLog } from '../../../src/server/algorithms/sliding-log.js';
import { slidingWindowCounter } from '../../../src/server/algorithms/sliding-window-counter.js';
import { tokenBucket } from '../../../src/server/algorithms/token-bucket.js';
import type { LimitConfig } from '../../../src/server/http/config.js';
import { declaredQuota } from '../../../src/server/http/declared-quota.js';
import {
  describePolicy,
  type PolicyReport,
  rateLimitFields,
  retryAfterField,
} from '../../../src/server/http/rate-limit-headers.js';
import { Host, learn } from './harness.js';

/** The server side: an algorithm with its configuration, declared as `limit` declares it. */
export interface Server {
  logic: AlgorithmLogic<unknown, unknown>;
  config: unknown;
  limit: LimitConfig;
}

/** The algorithms that limit a rate, by their mock-server names. */
export const RATE_ALGORITHMS = [
  'fixed-window',
  'sliding-log',
  'sliding-window-counter',
  'token-bucket',
  'gcra',
  'leaky-bucket',
] as const;

const logicOf = (logic: unknown) => logic as AlgorithmLogic<unknown, unknown>;

/**
 * `algorithm` admitting `rate` per second with a burst of `burst` (what it admits at once from
 * rest): a window holds `burst` per `burst / rate` seconds (whole milliseconds, as its option is),
 * GCRA has `burst - 1` beyond the first, a leaky bucket a queue of `burst`.
 */
export function serverFor(
  algorithm: (typeof RATE_ALGORITHMS)[number],
  rate: number,
  burst: number,
): Server {
  const windowMs = Math.max(1, Math.round((burst * 1000) / rate));
  const window = (logic: unknown, name: typeof algorithm & `${string}-${string}`): Server => ({
    logic: logicOf(logic),
    config: { limit: burst, windowMs },
    limit: { algorithm: name as 'fixed-window', limit: burst, windowMs },
  });
  switch (algorithm) {
    case 'fixed-window':
      return window(fixedWindow, algorithm);
    case 'sliding-log':
      return window(slidingLog, algorithm);
    case 'sliding-window-counter':
      return window(slidingWindowCounter, algorithm);
    case 'token-bucket':
      return {
        logic: logicOf(tokenBucket),
        config: { capacity: burst, refillPerSecond: rate },
        limit: { algorithm, capacity: burst, refillPerSecond: rate },
      };
    case 'gcra':
      return {
        logic: logicOf(gcra),
        config: { rate, burst: burst - 1 },
        limit: { algorithm, rate, burst: burst - 1 },
      };
    case 'leaky-bucket':
      return {
        logic: logicOf(leakyBucket),
        config: { rate, capacity: burst },
        limit: { algorithm, rate, capacity: burst },
      };
  }
}

/** A concurrency limit of `slots` requests at once, declared as the mock server declares it. */
export function concurrencyServer(slots: number): Server {
  return {
    logic: logicOf(concurrencyLimit),
    config: { limit: slots, retryAfterMs: 1000 },
    limit: { algorithm: 'concurrency', limit: slots },
  };
}

/** A simulation's parameters. */
export interface Simulation {
  server: Server;
  /** Calls, all waiting at time 0. */
  calls: number;
  /** Calls in flight at most (the pipeline's concurrency cap). @default 16 */
  concurrency?: number;
  /** One-way latency, milliseconds. @default 1 */
  latencyMs?: number;
  /**
   * How long the server's handler takes, milliseconds, before the answer leaves (a concurrency
   * limit gives the slot back then, on the server's time line). @default 0
   */
  serviceMs?: number;
  /** When the first call is sent, epoch milliseconds (windows are aligned to 0). @default 0 */
  start?: number;
  /** Gives up past this, milliseconds of simulated time. @default 3,600,000 */
  maxMs?: number;
  /**
   * A server of another kind, in place of `server`'s algorithm and the mock server's fields: the
   * answer to a request arriving at `at` (a limiter nobody here wrote, emulated).
   */
  respond?: (at: number) => { status: number; headers: Record<string, string> };
}

/** What a simulation came to. */
export interface Outcome {
  /** From the start to the last answer, milliseconds. */
  elapsedMs: number;
  /** Answers that were 429s. */
  refused: number;
  /** Attempts sent. */
  attempts: number;
  /** Calls that got a 2xx. */
  completed: number;
}

interface Flight {
  ticket: Ticket;
  /** When the answer reaches the client. */
  at: number;
  status: number;
  headers: Record<string, string>;
}

/** Runs the calls through the client's rules against the server; see the module comment. */
export function simulate(sim: Simulation): Outcome {
  const { server, calls } = sim;
  const concurrency = sim.concurrency ?? 16;
  const latency = sim.latencyMs ?? 1;
  const serviceMs = sim.serviceMs ?? 0;
  const start = sim.start ?? 0;
  const maxMs = sim.maxMs ?? 3_600_000;
  const slots = server.limit.algorithm === 'concurrency';
  /** When the server ends each response that holds a slot, soonest first. */
  const releases: number[] = [];
  const host = new Host(learn);
  const field = describePolicy(
    'p',
    declaredQuota(server.limit) ?? { slots: server.logic.limit(server.config) },
    server.limit.algorithm === 'concurrency' ? 'concurrent-requests' : 'requests',
  );
  let state: unknown;
  let waiting = calls;
  let completed = 0;
  let refused = 0;
  let attempts = 0;
  let now = start;
  let lastAnswer = start;
  const flights: Flight[] = [];

  /** The server's answer to a request arriving at `at`. */
  function serve(ticket: Ticket, at: number): Flight {
    if (sim.respond) return { ticket, at: at + latency, ...sim.respond(at) };
    // Requests arrive in the order they were sent: the slots given back by then are known.
    while (releases.length > 0 && (releases[0] as number) <= at) {
      state = server.logic.refund(
        state as never,
        releases.shift() as number,
        1,
        undefined,
        server.config,
      );
    }
    const d = decide(server.logic, server.config, state, at, 1);
    if (d.result.allowed) state = d.state;
    const report: PolicyReport = {
      name: 'p',
      ...d.result,
      concurrency: server.limit.algorithm === 'concurrency',
      unit: 'requests',
      field,
    };
    const raw = rateLimitFields('ietf', [report], !d.result.allowed, at);
    const headers: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) headers[raw[i] as string] = raw[i + 1] as string;
    if (!d.result.allowed) {
      headers['retry-after'] = retryAfterField('seconds', d.result.retryAfterMs, at) as string;
    }
    const sentAt = at + (d.result.delayMs ?? 0) + serviceMs;
    if (slots && d.result.allowed) {
      releases.push(sentAt);
      releases.sort((a, b) => a - b);
    }
    return { ticket, at: sentAt + latency, status: d.result.allowed ? 200 : 429, headers };
  }

  while (waiting > 0 || flights.length > 0) {
    if (now - start > maxMs)
      throw new Error(`simulation past ${maxMs} ms: ${completed} of ${calls}`);
    // Admit from the line while the rules let calls go.
    let wakeAt = Number.POSITIVE_INFINITY;
    while (waiting > 0 && flights.length < concurrency) {
      const verdict = host.admit(1, now);
      if (!verdict.ok) {
        if (verdict.waitMs !== undefined) wakeAt = now + Math.max(1e-3, verdict.waitMs);
        break;
      }
      waiting--;
      attempts++;
      flights.push(serve(verdict.ticket, now + latency));
    }
    flights.sort((a, b) => a.at - b.at);
    const next = flights[0];
    if (next === undefined && wakeAt === Number.POSITIVE_INFINITY) {
      throw new Error(`stuck at ${now - start} ms with ${waiting} waiting and nothing in flight`);
    }
    if (next !== undefined && next.at <= wakeAt) {
      flights.shift();
      now = next.at;
      lastAnswer = now;
      host.settle(next.ticket, next.status, next.headers, now);
      // An answer that declares a concurrency policy holds its request until its body ends: here,
      // at once (the pipeline settles the body's end).
      if (slots) host.bodyEnds(next.ticket, now);
      if (next.status === 429) {
        refused++;
        waiting++;
      } else {
        completed++;
      }
    } else {
      now = wakeAt;
    }
  }
  return { elapsedMs: lastAnswer - start, refused, attempts, completed };
}

/**
 * The least time the server allows for the same calls: each sent the moment the algorithm would
 * admit it (it knows the server's state), with the same latency and concurrency, answered as the
 * server answers (a leaky bucket's turn included). Milliseconds from the start to the last answer.
 */
export function leastTime(sim: Simulation): number {
  const { server, calls } = sim;
  const latency = sim.latencyMs ?? 1;
  const concurrency = sim.concurrency ?? 16;
  const start = sim.start ?? 0;
  let state: unknown;
  const answers: number[] = [];
  let last = start;
  let previous = start + latency;
  for (let i = 0; i < calls; i++) {
    // A free slot: the earliest answer among the last `concurrency` ones; calls go in order.
    answers.sort((a, b) => a - b);
    const free = answers.length < concurrency ? start : (answers.shift() as number);
    let at = Math.max(free + latency, previous);
    let d = decide(server.logic, server.config, state, at, 1);
    // At epoch-sized times an algorithm's floating-point arithmetic may refuse a hair after its
    // own delay said yes: a millisecond more.
    for (let tries = 0; !d.result.allowed && tries < 1000; tries++) {
      at += Math.max(1, server.logic.delayUntil(state, at, 1, server.config));
      d = decide(server.logic, server.config, state, at, 1);
    }
    if (!d.result.allowed) throw new Error(`oracle refused at ${at}`);
    previous = at;
    state = d.state;
    const answer = at + (d.result.delayMs ?? 0) + latency;
    answers.push(answer);
    last = Math.max(last, answer);
  }
  return last - start;
}

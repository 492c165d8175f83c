/**
 * Following calls from outside, as an APM tool does: subscribe to the client's channels on Node's
 * `diagnostics_channel`, with no option on the client and no reference to it. Each message names
 * its call by an opaque object (`call`), so a `WeakMap` gathers one call's story: here, 8 calls at
 * a server that allows 3 per second and says so, and what held each one before it was sent.
 *
 *   npx tsx examples/diagnostics-channel.ts
 */
import diagnostics from 'node:diagnostics_channel';
import { LimitedClient } from 'limited-client';
import { createMockServer } from 'limited-client/server';

// The subscriber: it knows the channel names, not the client.
interface Story {
  url: string;
  steps: string[];
}
const stories = new WeakMap<object, Story>();
const finished: Story[] = [];
const story = (message: { call: object; url: string }): Story => {
  let s = stories.get(message.call);
  if (s === undefined) {
    s = { url: message.url, steps: [] };
    stories.set(message.call, s);
  }
  return s;
};
diagnostics.subscribe('limited-client:call:held', (m) => {
  const message = m as { call: object; url: string; reason: string; waitMs?: number };
  const wait = message.waitMs === undefined ? '' : `, ~${message.waitMs} ms`;
  story(message).steps.push(`held (${message.reason}${wait})`);
});
diagnostics.subscribe('limited-client:call:sent', (m) => {
  const message = m as { call: object; url: string; attempt: number; waitedMs: number };
  story(message).steps.push(`sent #${message.attempt} after ${message.waitedMs} ms`);
});
diagnostics.subscribe('limited-client:call:done', (m) => {
  const message = m as { call: object; url: string; status?: number; durationMs: number };
  const s = story(message);
  s.steps.push(`done ${message.status ?? 'error'} in ${message.durationMs} ms`);
  finished.push(s);
});

// The application: a client like any other.
const server = await createMockServer({
  routes: [
    {
      path: '/v1/things/:id',
      limits: [{ algorithm: 'fixed-window', limit: 3, windowMs: 1000, name: 'per-second' }],
    },
  ],
});
const client = new LimitedClient(server.url);
await Promise.all(
  Array.from({ length: 8 }, async (_, i) => (await client.get(`/v1/things/${i}`)).arrayBuffer()),
);
await client.close();
await server.close();

for (const s of finished) console.log(`${new URL(s.url).pathname}: ${s.steps.join(' -> ')}`);
console.log(`server: ${server.stats().rejected} rejected`);

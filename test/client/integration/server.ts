/**
 * Starting the in-repo mock server for the client's integration tests (real HTTP on loopback).
 */
import {
  createMockServer,
  type MockServer,
  type MockServerConfig,
} from '../../../src/server/index.js';

/** Every mock server started by a test file, closed by {@link closeAll}. */
const started: MockServer[] = [];

/** Starts a mock server on an ephemeral loopback port. */
export async function start(config: MockServerConfig): Promise<MockServer> {
  const server = await createMockServer(config);
  started.push(server);
  return server;
}

/** Closes every server this file started. */
export async function closeAll(): Promise<void> {
  await Promise.all(started.splice(0).map((s) => s.close()));
}

/** Resolves after `ms` of real time (integration tests only; never used to assert durations). */
export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

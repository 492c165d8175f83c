#!/usr/bin/env node
/**
 * The `limited-client-server` executable. See {@link runCli} for what it does.
 *
 * @module
 */
import { runCli } from './cli.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`limited-client-server: ${String(error)}\n`);
    process.exitCode = 1;
  },
);

#!/usr/bin/env node
/** The `raven` executable. */
import { runCli } from './cli.js';

let settled = false;
runCli(process.argv.slice(2)).then(
  (code) => {
    settled = true;
    process.exitCode = code;
  },
  (err: unknown) => {
    settled = true;
    process.stderr.write(`raven: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);

// A command still running when nothing holds the event loop is a bug (a wait on an unref'ed
// timer): Node would exit 0, and a script would believe `raven watch` ended cleanly. Fail instead.
process.once('beforeExit', () => {
  if (settled) return;
  process.stderr.write('raven: internal error: the command stopped before it finished; please report it\n');
  process.exitCode = 1;
});

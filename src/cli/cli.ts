/**
 * The `raven` command line: pick the command, run it, map errors to exit codes (1 for errors, 2 for
 * usage errors) with one clear message. Thin by design: the work is in the library.
 */
import { RavenError } from '../errors/raven-error.js';
import { version } from '../client/version.js';
import { processOutput, write } from './output.js';
import { UsageError } from './usage-error.js';
import { checkUsage, completionUsage, docsPage, getUsage, runUsage, uiUsage, watchUsage } from './usage.js';

const usage = `Usage: raven <command> [options]

Commands:
  watch <resource> [name]  print objects, then every change with what changed
  get <resource> [name]    print the objects that exist now, once
  run [-c raven.yaml]      run the daemon: watchers, routes, sinks
  check -c raven.yaml      validate a config file
  ui [resource...]         serve a live web view of the changes (http://127.0.0.1:9480/)
  completion bash|zsh|fish print a shell completion script

Options:
  -h, --help               help (also: raven <command> --help)
  -v, --version            print the version

Docs: ${docsPage('cli.md')} (README.md and docs/ ship with the package)`;

type Command = (
  argv: string[],
  deps: { output: ReturnType<typeof processOutput>; signal: AbortSignal },
) => Promise<number>;

// Each command's code is loaded when it runs: `raven watch` starts without the daemon's sinks.
const commands: Record<string, { run: Command; usage: string }> = {
  watch: { run: async (...a) => (await import('./watch-command.js')).watchCommand(...a), usage: watchUsage },
  run: { run: async (...a) => (await import('./run-command.js')).runCommand(...a), usage: runUsage },
  check: { run: async (...a) => (await import('./check-command.js')).checkCommand(...a), usage: checkUsage },
  ui: { run: async (...a) => (await import('./ui-command.js')).uiCommand(...a), usage: uiUsage },
  get: { run: async (...a) => (await import('./get-command.js')).getCommand(...a), usage: getUsage },
  completion: {
    run: async (...a) => (await import('./completion-command.js')).completionCommand(...a),
    usage: completionUsage,
  },
};

/** What shell completion offers: every command with its usage text (its options). */
function usages(): Record<string, string> {
  return Object.fromEntries(Object.entries(commands).map(([name, c]) => [name, c.usage]));
}

// Called by the completion scripts; not listed in the usage.
const hidden: Record<string, { run: Command; usage: string }> = {
  __complete: {
    run: async (argv, deps) =>
      (await import('./completion-command.js')).completeCommand(argv, deps, usages()),
    usage: '',
  },
};

/** Run the command line `argv` (without the node and script paths); resolves with the exit code. */
export async function runCli(argv: string[], output = processOutput()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '-h' || name === '--help' || name === 'help') {
    await write(output.out, `${usage}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '-v' || name === '--version') {
    await write(output.out, `${version}\n`);
    return 0;
  }
  const command = commands[name] ?? hidden[name];
  if (command === undefined) {
    await write(output.err, `raven: unknown command "${name}"\n\n${usage}\n`);
    return 2;
  }
  const controller = new AbortController();
  let interrupted = 0;
  const onSignal = (): void => {
    interrupted++;
    // The first signal stops gracefully; a second one exits at once.
    if (interrupted > 1) process.exit(130);
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    return await command.run(rest, { output, signal: controller.signal });
  } catch (err) {
    if (controller.signal.aborted) return 0;
    if (
      err instanceof UsageError ||
      (err instanceof Error && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      await write(output.err, `raven ${name}: ${err.message}\n\n${command.usage}\n`);
      return 2;
    }
    const message = err instanceof RavenError || err instanceof Error ? err.message : String(err);
    await write(output.err, `raven ${name}: ${message}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

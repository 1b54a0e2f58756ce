/**
 * The `raven` command line: pick the command, run it, map errors to exit codes (1 for errors, 2 for
 * usage errors) with one clear message. Thin by design: the work is in the library.
 */
import { RavenError } from '../errors/raven-error.js';
import { version } from '../client/version.js';
import { processOutput, write } from './output.js';
import { UsageError } from './usage-error.js';
import { watchCommand, watchUsage } from './watch-command.js';
import { runCommand, runUsage } from './run-command.js';
import { checkCommand, checkUsage } from './check-command.js';
import { uiCommand, uiUsage } from './ui-command.js';
import { getCommand, getUsage } from './get-command.js';
import { completeCommand, completionCommand, completionUsage } from './completion-command.js';

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

Docs: https://www.npmjs.com/package/kube-raven`;

type Command = (
  argv: string[],
  deps: { output: ReturnType<typeof processOutput>; signal: AbortSignal },
) => Promise<number>;

const commands: Record<string, { run: Command; usage: string }> = {
  watch: { run: watchCommand, usage: watchUsage },
  run: { run: runCommand, usage: runUsage },
  check: { run: checkCommand, usage: checkUsage },
  ui: { run: uiCommand, usage: uiUsage },
  get: { run: getCommand, usage: getUsage },
  completion: { run: completionCommand, usage: completionUsage },
};

/** What shell completion offers: every command with its usage text (its options). */
function usages(): Record<string, string> {
  return Object.fromEntries(Object.entries(commands).map(([name, c]) => [name, c.usage]));
}

// Called by the completion scripts; not listed in the usage.
const hidden: Record<string, { run: Command; usage: string }> = {
  __complete: { run: (argv, deps) => completeCommand(argv, deps, usages()), usage: '' },
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

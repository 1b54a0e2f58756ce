/**
 * Shell completion: `raven completion bash|zsh|fish` prints a script for the shell, and the script
 * asks `raven __complete <words so far>` for candidates, so completion knows what the running
 * version knows: commands, each command's options (read from its own usage text, so they cannot
 * drift), `-o` formats, and from the cluster (best effort, a few seconds at most, silent on
 * failure) the resource names discovery serves and the namespaces that exist.
 *
 * `__complete` prints one candidate per line; `__files__` alone asks the shell to complete file
 * names (after `-c`, `--kubeconfig`, `--token-file`). The shell filters by the typed prefix.
 */
import { loadConfig, type LoadConfigOptions } from '../client/load-config.js';
import { KubeClient } from '../client/kube-client.js';
import { Discovery } from '../client/discovery.js';
import { write, type Output } from './output.js';
import { UsageError } from './usage-error.js';
import { WATCH_FORMATS } from './format-watch.js';
import { completionUsage } from './usage.js';

/** The commands and their usage texts, for candidates. */
export type CommandUsages = Readonly<Record<string, string>>;

/** Cluster look-ups give up after this: a completion must never hang the shell. */
const CLUSTER_TIMEOUT_MS = 3_000;

const FILE_OPTIONS = new Set(['-c', '--config', '--kubeconfig', '--token-file']);

/**
 * The command the scripts run for candidates: this very node and script, by absolute path, so
 * completion works where `raven` is not on PATH (`source <(npx raven completion bash)`).
 */
function selfCommand(): string {
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  return [process.execPath, process.argv[1] ?? 'raven'].map(quote).join(' ');
}

const scripts = (raven: string) => ({
  bash: `# raven completion for bash: source <(raven completion bash)
# Completes raven, kubectl-raven, npx raven and npx kube-raven.
_raven() {
  local cur=\${COMP_WORDS[COMP_CWORD]} IFS=$'\\n' words skip=1
  if [[ \${COMP_WORDS[0]} == npx ]]; then
    [[ \${COMP_WORDS[1]} == raven || \${COMP_WORDS[1]} == kube-raven ]] || return 0
    skip=2
  fi
  (( COMP_CWORD >= skip )) || return 0
  words=$(${raven} __complete "\${COMP_WORDS[@]:skip:COMP_CWORD-skip+1}" 2>/dev/null)
  if [[ $words == __files__ ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
}
complete -F _raven raven kubectl-raven npx
`,
  zsh: `#compdef raven
# raven completion for zsh: source <(raven completion zsh) (after compinit)
_raven() {
  local -a candidates
  candidates=("\${(@f)$(${raven} __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  if [[ \${candidates[1]} == __files__ ]]; then
    _files
  else
    compadd -a candidates
  fi
}
compdef _raven raven kubectl-raven
`,
  fish: `# raven completion for fish: raven completion fish | source
function __raven_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l out (${raven} __complete $words[2..-1] 2>/dev/null)
    if test "$out" = __files__
        __fish_complete_path (commandline -ct)
    else
        printf '%s\\n' $out
    end
end
complete -c raven -f -a '(__raven_complete)'
complete -c kubectl-raven -f -a '(__raven_complete)'
`,
});

const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** `raven completion <shell>`. */
export async function completionCommand(argv: string[], deps: { output: Output }): Promise<number> {
  const [shell, ...extra] = argv;
  if (shell === '-h' || shell === '--help') {
    await write(deps.output.out, `${completionUsage}\n`);
    return 0;
  }
  if (shell === undefined || !SHELLS.includes(shell as (typeof SHELLS)[number]) || extra.length > 0)
    throw new UsageError(
      `raven completion needs a shell: bash, zsh or fish${shell === undefined ? '' : `; got "${[shell, ...extra].join(' ')}"`}`,
    );
  await write(deps.output.out, scripts(selfCommand())[shell as (typeof SHELLS)[number]]);
  return 0;
}

/** `raven __complete <words...>`: the candidates for the last word (possibly empty). */
export async function completeCommand(
  argv: string[],
  deps: { output: Output; signal: AbortSignal; env?: NodeJS.ProcessEnv },
  usages: CommandUsages,
): Promise<number> {
  const candidates = await candidatesFor(argv, usages, deps.env);
  await write(deps.output.out, candidates.length === 0 ? '' : `${candidates.join('\n')}\n`);
  return 0;
}

async function candidatesFor(
  words: string[],
  usages: CommandUsages,
  env: NodeJS.ProcessEnv | undefined,
): Promise<string[]> {
  const [command, ...rest] = words;
  if (rest.length === 0) return Object.keys(usages);
  const current = rest.at(-1) ?? '';
  const previous = rest.at(-2);
  if (command === 'completion') return rest.length === 1 ? ['bash', 'zsh', 'fish'] : [];
  if (previous !== undefined && FILE_OPTIONS.has(previous)) return ['__files__'];
  if (previous === '-o' || previous === '--output')
    return WATCH_FORMATS.map((f) => (f.includes('=') ? f.slice(0, f.indexOf('=') + 1) : f));
  const cluster = clusterOptions(rest);
  if (previous === '-n' || previous === '--namespace') return namespaces(cluster, env);
  if (current.startsWith('-')) return options(usages[command ?? ''] ?? '');
  // The first positional of watch, get and ui is a resource (ui takes several).
  const positionals = positionalCount(rest.slice(0, -1));
  if ((command === 'watch' || command === 'get') && positionals === 0) return resources(cluster, env);
  if (command === 'ui') return resources(cluster, env);
  return [];
}

/** `--long` options named in a usage text, in order. */
function options(usage: string): string[] {
  return [...new Set(usage.match(/(?<=^\s+(?:-\w, )?)--[a-z][a-z-]*/gm) ?? [])];
}

/** Words before the current one that are not options or their values. */
function positionalCount(words: string[]): number {
  let count = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (word.startsWith('-')) {
      // Boolean flags take no value; the rest take the next word unless given as --flag=value.
      if (!word.includes('=') && !BOOLEAN_FLAGS.has(word)) i++;
    } else count++;
  }
  return count;
}

const BOOLEAN_FLAGS = new Set([
  '-A',
  '--all-namespaces',
  '--since-now',
  '--show-managed-fields',
  '--wait-for-rbac',
  '--no-headers',
  '--show-labels',
  '--output-watch-events',
  '-h',
  '--help',
]);

/** `--kubeconfig` and `--context` as typed so far; one given last, with no value yet, is undefined. */
type ClusterOptions = Pick<LoadConfigOptions, 'kubeconfig' | 'context'>;

function clusterOptions(words: string[]): ClusterOptions {
  const out: ClusterOptions = {};
  words.forEach((word, i) => {
    if (word === '--kubeconfig') out.kubeconfig = words[i + 1];
    if (word === '--context') out.context = words[i + 1];
  });
  return out;
}

async function withCluster<T>(
  options: ClusterOptions,
  env: NodeJS.ProcessEnv | undefined,
  use: (client: KubeClient, signal: AbortSignal) => Promise<T[]>,
): Promise<T[]> {
  let client: KubeClient | undefined;
  const signal = AbortSignal.timeout(CLUSTER_TIMEOUT_MS);
  try {
    client = new KubeClient(await loadConfig({ ...options, env }));
    return await use(client, signal);
  } catch {
    // No cluster, no access, too slow: complete what is known without it.
    return [];
  } finally {
    await client?.destroy();
  }
}

function resources(options: ClusterOptions, env: NodeJS.ProcessEnv | undefined): Promise<string[]> {
  return withCluster(options, env, async (client, signal) => {
    const all = await new Discovery(client).resources(signal);
    const names = all
      .filter((r) => r.verbs.includes('watch') && r.preferred)
      .flatMap((r) => [r.resource, ...r.shortNames, ...(r.group === '' ? [] : [`${r.resource}.${r.group}`])]);
    return [...new Set(names)].sort();
  });
}

function namespaces(options: ClusterOptions, env: NodeJS.ProcessEnv | undefined): Promise<string[]> {
  return withCluster(options, env, async (client, signal) => {
    const list = await client.request<{ items?: { metadata?: { name?: string } }[] }>({
      method: 'GET',
      path: '/api/v1/namespaces',
      signal,
    });
    return (list.items ?? []).map((n) => n.metadata?.name ?? '').filter((n) => n !== '');
  });
}

/**
 * The usage text of every command, in a module of its own: `raven` loads these at start and a
 * command's code only when that command runs (`raven watch` never loads the daemon's sinks), and
 * shell completion reads the options of every command from them.
 */
import { fileURLToPath } from 'node:url';

/**
 * The absolute path of a page of the docs, which ship in the package (package.json "files"): the
 * path a help text prints exists wherever the package is installed, whatever the working directory.
 */
export function docsPage(page: string): string {
  return fileURLToPath(new URL(`../../docs/${page}`, import.meta.url));
}

/** Failures in a row (each retried after the watcher's backoff) before `raven get` gives up. */
export const GIVE_UP_AFTER = 3;

/** The default port: next to the daemon's 9479, away from Prometheus' 9090. */
export const UI_DEFAULT_PORT = 9480;

/** What `raven ui` watches when no resource is named. */
export const DEFAULT_RESOURCES = [
  'deployments.apps',
  'statefulsets.apps',
  'daemonsets.apps',
  'pods',
  'services',
  'jobs.batch',
  'cronjobs.batch',
];

export const watchUsage = `Usage: raven watch <resource>[,<resource>...] [name] [options]

Print the current objects, then every change as it happens (with what changed and the TIME it
arrived). Nothing there: kubectl's "No resources found" on stderr, and the watch goes on; a named
object that does not exist is waited for.

Arguments:
  resource                 pods, po, deploy, deployments.apps, apps/v1/deployments, a CRD's plural,
                           singular, short name or kind; several with commas: pods,svc
  name                     only this object (waited for when it does not exist)

Options:
  -n, --namespace NS       a namespace (default: the context's); repeat or use patterns: -n 'team-*' -n '!team-old'
  -A, --all-namespaces     every namespace
  -l, --selector SEL       label selector: app=web, tier in (a,b), !canary
      --field-selector SEL field selector: status.phase=Running
  -o, --output FORMAT      table (default): the server's columns | wide: and its wide ones
                           diff: every change in full | json | yaml | name: kind/name
                           jsonpath=TEMPLATE: kubectl's syntax, e.g. '{.metadata.name}{"\\t"}{.status.phase}'
                           custom-columns=HEADER:PATH,...: e.g. NAME:.metadata.name,IMAGE:.spec.containers[*].image
      --output-watch-events  json, yaml: kubectl's {"type":"ADDED","object":{...}}; jsonpath and
                           custom-columns paths read that event: '{.type} {.object.metadata.name}'
      --no-headers         no header line (table, wide, diff, custom-columns)
      --show-labels        a LABELS column, last
  -L, --label-columns KEY  a column per label key: -L app -L tier,version
      --since-now          skip the objects that exist now; show only changes from now on
      --show-managed-fields  keep metadata.managedFields (dropped by default)
      --wait-for-rbac      on 403 Forbidden, report it once and keep retrying until access is
                           granted (default: exit 1)
      --kubeconfig FILE    kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      --context NAME       kubeconfig context to use
  -h, --help               this help

Failures that can heal (no connection, 5xx, 429 Too Many Requests, 410 Expired) print one line
on stderr each and the watch goes on. It ends only on what cannot heal, with the server's message.

Exit status:
  0  interrupted (Ctrl-C or SIGTERM); a second signal exits 130 at once
  1  an error that cannot heal: the server rejected the request (400/422, e.g. an unsupported
     field selector), the resource is not served (unknown name, or a 404 and discovery no longer
     lists it), credentials refused after refreshing them (401), 403 Forbidden without
     --wait-for-rbac, a selector that does not parse, or a bad kubeconfig
  2  a usage error (unknown option, missing resource, bad --output)
Details: ${docsPage('cli.md')}`;

export const getUsage = `Usage: raven get <resource>[,<resource>...] [name] [options]

Print the objects that exist now, once, with the apiserver's columns (as kubectl get does).

Arguments:
  resource                 pods, po, deploy, deployments.apps, a CRD's plural, singular, short name or
                           kind; several with commas: pods,svc (a table per kind, names as kind/name)
  name                     only this object (exit 1 when it does not exist)

Options:
  -n, --namespace NS       a namespace (default: the context's); repeat or use patterns: -n 'team-*' -n '!team-old'
  -A, --all-namespaces     every namespace
  -l, --selector SEL       label selector: app=web, tier in (a,b), !canary
      --field-selector SEL field selector: status.phase=Running
  -o, --output FORMAT      table (default) | wide | json | yaml (one List) | name
                           jsonpath=TEMPLATE | custom-columns=HEADER:PATH,...
      --sort-by PATH       order by a field, kubectl's JSONPath: .metadata.name,
                           '{.metadata.creationTimestamp}' (default: namespace, then name)
      --no-headers         no header line
      --show-labels        a LABELS column, last
  -L, --label-columns KEY  a column per label key: -L app -L tier,version
      --show-managed-fields  keep metadata.managedFields (dropped by default)
      --kubeconfig FILE    kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      --context NAME       kubeconfig context to use
  -h, --help               this help

Exit status:
  0  listed (also when nothing was found: kubectl's "No resources found" on stderr)
  1  the named object does not exist (kubectl's "Error from server (NotFound): ..."), a --sort-by
     field no object has, the server refused the request, the resource is not
     served, credentials or permission refused, or ${GIVE_UP_AFTER} failures in a row reaching the server
  2  a usage error
Details: ${docsPage('cli.md')}`;

export const runUsage = `Usage: raven run [-c raven.yaml] [options]

Run the daemon: the watchers, routes and sinks of the config file.

Options:
  -c, --config FILE      the config (default: a built-in one that prints workload changes to stdout)
      --kubeconfig FILE  overrides the config's kubeconfig
      --context NAME     overrides the config's context
      --log-level LEVEL  trace | debug | info | warn | error (overrides the config)
      --log-format FMT   json | pretty (default: pretty on a terminal, JSON otherwise)
      --port PORT        the health and metrics server's port (overrides server.port; default 9479, 0 picks a free one)
      --listen ADDR:PORT its address and port, e.g. 0.0.0.0:9479 or [::1]:9479 (overrides server.address and server.port)
  -h, --help             this help

Logs go to stderr (JSON, or readable lines on a terminal); a stdout sink writes events to stdout.
Ctrl-C or SIGTERM: stop watching, drain deliveries (shutdown.drainTimeoutSeconds), write checkpoints,
exit 0; a second signal exits at once. Details: ${docsPage('configuration.md')}`;

export const checkUsage = `Usage: raven check -c raven.yaml [options]

Validate a config file: every error names the file, the field and what would be valid. A valid
file is then checked against the cluster: every watcher's resource must be served (a misspelled
one gets the nearest names). No reachable cluster is an error; --offline checks the file alone.
Exit 0 when it is valid (warnings are printed too), 1 when it is not or could not be checked.

Options:
  -c, --config FILE        the config file
      --offline            do not ask a cluster; check the file alone
      --kubeconfig FILE    kubeconfig to use (default: the config's, $KUBECONFIG, ~/.kube/config, in-cluster)
      --context NAME       kubeconfig context to use (default: the config's)
  -h, --help               this help`;

export const uiUsage = `Usage: raven ui [resource...] [options]

Serve a live web view of the cluster's changes: the objects, every change with its diff, each
watcher's health, a chart of changes per second, filters, pause, and an object's history.

Arguments:
  resource                 what to watch (default: ${DEFAULT_RESOURCES.join(', ')})

Options:
  -n, --namespace NS       a namespace or pattern, repeatable: -n 'team-*' -n '!team-old'
                           (default: every namespace but kube-*)
  -A, --all-namespaces     every namespace, kube-* included
  -l, --selector SEL       label selector: app=web, tier in (a,b), !canary
      --port PORT          the page's port on 127.0.0.1 (default ${UI_DEFAULT_PORT}; 0 picks a free one)
      --listen ADDR:PORT   address and port, e.g. 0.0.0.0:${UI_DEFAULT_PORT} (then set a token)
      --token-file FILE    require this bearer token (also: $RAVEN_UI_TOKEN); open the page
                           as http://HOST:PORT/#token=TOKEN
      --kubeconfig FILE    kubeconfig to use (default: $KUBECONFIG, ~/.kube/config, in-cluster)
      --context NAME       kubeconfig context to use
  -h, --help               this help

Prints the page's address on stdout, runs until Ctrl-C or SIGTERM (exit 0).
Exit status 1: an unknown resource, a bad kubeconfig, a busy port; 2: a usage error.
Details: ${docsPage('ui.md')}`;

export const completionUsage = `Usage: raven completion bash|zsh|fish

Print a completion script for the shell. Load it:
  bash  source <(raven completion bash)          (in ~/.bashrc)
  zsh   source <(raven completion zsh)           (in ~/.zshrc, after compinit)
  fish  raven completion fish | source           (or save to ~/.config/fish/completions/raven.fish)
Installed in a project, not on PATH: source <(npx raven completion bash), which completes npx raven.

It completes commands, options, output formats, resource names and namespaces (the last two
from the current kubeconfig's cluster). Details: ${docsPage('cli.md')}`;

/**
 * Where Raven keeps state it writes for a user (checkpoints, the redaction key, dead letters):
 * never beside the config file, which may sit in a source tree.
 *
 * - The user's state directory is `$XDG_STATE_HOME/raven` (an absolute `XDG_STATE_HOME` only, as
 *   the XDG base directory specification asks), else `~/.local/state/raven`.
 * - A config file's state directory is `<that>/<config name>`, the file's name without `.yaml` or
 *   `.yml`: two configs never share a checkpoint. `RAVEN_STATE_DIR` in the environment chooses
 *   another directory; configs refer to it as `${RAVEN_STATE_DIR}`.
 */
import { homedir } from 'node:os';
import { basename, join } from 'node:path';

export const STATE_DIR_ENV = 'RAVEN_STATE_DIR';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The directory Raven keeps per-user state in: `$XDG_STATE_HOME/raven` or `~/.local/state/raven`.
 *
 * @example
 * stateDir({ XDG_STATE_HOME: '/x/state' }, '/home/u'); // => '/x/state/raven'
 */
export function stateDir(env: Env = process.env, homeDir = homedir()): string {
  const xdg = env.XDG_STATE_HOME;
  return xdg !== undefined && xdg.startsWith('/')
    ? join(xdg, 'raven')
    : join(homeDir, '.local', 'state', 'raven');
}

/**
 * The state directory of one config file: `RAVEN_STATE_DIR` when set, else the user's state
 * directory and the file's name (`raven` for a config that has no file).
 *
 * @example
 * configStateDir('/src/examples/chat-alerts.yaml', {}, '/home/u'); // => '/home/u/.local/state/raven/chat-alerts'
 */
export function configStateDir(
  file: string | undefined,
  env: Env = process.env,
  homeDir = homedir(),
): string {
  const chosen = env[STATE_DIR_ENV];
  if (chosen !== undefined && chosen !== '') return chosen;
  const name = file === undefined ? 'raven' : basename(file).replace(/\.ya?ml$/i, '') || 'raven';
  return join(stateDir(env, homeDir), name);
}

/**
 * Shell completion as a user gets it: `raven completion bash|zsh|fish` is loaded into the real
 * shell (bash, zsh and fish from Debian), with `raven` on PATH, and the shell's own completion
 * machinery is asked for candidates: commands, options, output formats, resource names and
 * namespaces from the real control plane, and file names after `-c`.
 *
 * bash: the completion function is called with COMP_WORDS/COMP_CWORD as bash sets them and bash's
 * compgen filters. fish: `complete -C` asks fish itself. zsh: completion widgets only run inside
 * an interactive line editor, so the script is loaded after compinit and its function is called
 * with `words`/`CURRENT` set, `compadd` and `_files` recording what they were given (zsh filters
 * by prefix inside compadd; the test checks what the script hands it).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, symlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { deleteNamespace, freshNamespace, sharedCluster } from '../harness/test-cluster.js';
import { runRaven, tempDir } from './daemon-process.js';

const run = promisify(execFile);

/** The path of `command` on PATH, or undefined. */
async function which(command: string): Promise<string | undefined> {
  try {
    return (await run('sh', ['-c', `command -v ${command}`])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
const root = resolve(import.meta.dirname, '..', '..');

/**
 * A directory with a `raven` executable for PATH: the package's bin, `dist/cli/main.js`, as an
 * installed raven runs (`npm test` builds it first). The shell starts it once per completion, so
 * the compiled build also keeps these tests from paying a TypeScript transform each time.
 */
async function ravenOnPath(t: TestContext): Promise<string> {
  const main = join(root, 'dist', 'cli', 'main.js');
  assert.ok(existsSync(main), `${main} is missing: run npm run build first`);
  const dir = await tempDir(t);
  await writeFile(join(dir, 'raven'), `#!/bin/sh\nexec "${process.execPath}" "${main}" "$@"\n`);
  await chmod(join(dir, 'raven'), 0o755);
  return dir;
}

async function shell(bin: string, script: string, env: Record<string, string>): Promise<string[]> {
  const { stdout } = await run(bin, ['-c', script], { env: { ...process.env, ...env }, timeout: 300_000 });
  return stdout.split('\n').filter((l) => l !== '');
}

const quote = (words: string[]): string => words.map((w) => `'${w}'`).join(' ');

test('raven completion bash completes commands, options, formats, resources, namespaces and files in bash', async (t) => {
  const plane = await sharedCluster();
  const ns = await freshNamespace(plane, 'compl');
  t.after(() => deleteNamespace(plane, ns));
  const bin = await ravenOnPath(t);
  const files = await tempDir(t);
  await writeFile(join(files, 'raven.yaml'), 'watchers: []\n');
  const env = { PATH: `${bin}:${process.env.PATH ?? ''}`, KUBECONFIG: plane.kubeconfig };
  const complete = (...words: string[]): Promise<string[]> =>
    shell(
      'bash',
      `source <(raven completion bash)
complete -p raven >/dev/null || exit 3
COMP_WORDS=(${quote(['raven', ...words])}); COMP_CWORD=${words.length}
_raven; printf '%s\\n' "\${COMPREPLY[@]}"`,
      env,
    );
  assert.deepEqual(await complete('wa'), ['watch']);
  assert.deepEqual((await complete('')).sort(), ['check', 'completion', 'get', 'run', 'ui', 'watch']);
  assert.deepEqual(await complete('completion', 'f'), ['fish']);
  assert.deepEqual(await complete('watch', 'pods', '--wait'), ['--wait-for-rbac']);
  assert.deepEqual(await complete('ui', '--tok'), ['--token-file']);
  assert.deepEqual((await complete('watch', 'pods', '-o', 'js')).sort(), ['json', 'jsonpath=']);
  assert.deepEqual((await complete('watch', 'deploy')).sort(), ['deploy', 'deployments', 'deployments.apps']);
  assert.deepEqual(await complete('get', 'cm', '-n', ns.slice(0, -2)), [ns]);
  assert.deepEqual(await complete('run', '-c', join(files, 'rav')), [join(files, 'raven.yaml')]);
  // A resource is the first positional only: after it, nothing (a name is not guessed).
  assert.deepEqual(await complete('watch', 'pods', '-n', 'default', 'p'), []);
});

test('raven completion fish completes through fish itself', async (t) => {
  const plane = await sharedCluster();
  const bin = await ravenOnPath(t);
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    KUBECONFIG: plane.kubeconfig,
    HOME: await tempDir(t),
  };
  const complete = async (line: string): Promise<string[]> =>
    (await shell('fish', `raven completion fish | source; complete -C '${line}'`, env)).map(
      (l) => l.split('\t')[0] ?? '',
    );
  assert.deepEqual(await complete('raven wa'), ['watch']);
  assert.deepEqual((await complete('raven get configm')).sort(), ['configmaps']);
  assert.deepEqual(await complete('raven watch pods --since'), ['--since-now']);
});

test('raven completion zsh loads after compinit and hands compadd the candidates', async (t) => {
  const plane = await sharedCluster();
  const bin = await ravenOnPath(t);
  const home = await tempDir(t);
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    KUBECONFIG: plane.kubeconfig,
    HOME: home,
    ZDOTDIR: home,
  };
  const complete = (...words: string[]): Promise<string[]> =>
    shell(
      'zsh',
      `autoload -U compinit && compinit -u -d ${home}/.zcompdump
source <(raven completion zsh)
(( $+functions[_raven] )) || exit 3
[[ $_comps[raven] == _raven ]] || exit 4
compadd() { [[ $1 == -a ]] && print -l -- "\${(@P)2}" }
_files() { print -- __files_completed__ }
words=(${quote(['raven', ...words])}); CURRENT=${words.length + 1}
_raven`,
      env,
    );
  assert.deepEqual((await complete('')).sort(), ['check', 'completion', 'get', 'run', 'ui', 'watch']);
  assert.ok((await complete('watch', 'config')).includes('configmaps'));
  assert.deepEqual(await complete('run', '-c', 'x'), ['__files_completed__']);
});

test('raven completion without a known shell is a usage error', async () => {
  const result = await runRaven(['completion', 'tcsh']);
  assert.equal(result.code, 2);
  assert.match(result.stderr, /bash, zsh or fish; got "tcsh"/);
});

test('source <(npx raven completion bash) completes `npx raven ...` with no raven on PATH', async (t) => {
  const plane = await sharedCluster();
  const main = join(root, 'dist', 'cli', 'main.js');
  assert.ok(existsSync(main), `${main} is missing: run npm run build first`);
  // What npx leaves: the script run by node; `raven` itself is not on PATH.
  const env = { PATH: '/usr/bin:/bin', KUBECONFIG: plane.kubeconfig, HOME: await tempDir(t) };
  const { stdout: script } = await run(process.execPath, [main, 'completion', 'bash']);
  const scriptFile = join(await tempDir(t), 'raven.bash');
  await writeFile(scriptFile, script);
  const complete = (...words: string[]): Promise<string[]> =>
    shell(
      'bash',
      `command -v raven && exit 4
source '${scriptFile}'
complete -p npx >/dev/null || exit 3
COMP_WORDS=(${quote(words)}); COMP_CWORD=${words.length - 1}
_raven; printf '%s\\n' "\${COMPREPLY[@]}"`,
      env,
    );
  assert.deepEqual(await complete('npx', 'raven', 'wa'), ['watch']);
  assert.deepEqual(await complete('npx', 'raven', 'watch', 'pods', '--wait'), ['--wait-for-rbac']);
  assert.deepEqual((await complete('npx', 'raven', 'get', 'configm')).sort(), ['configmaps']);
  assert.deepEqual(await complete('kubectl-raven', 'wa'), ['watch']);
  // Another npx package gets nothing from raven's completion.
  assert.deepEqual(await complete('npx', 'prettier', 'wa'), []);
});

test('kubectl runs raven as the plugin kubectl-raven, the package.json bin', async (t) => {
  const plane = await sharedCluster();
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  assert.equal(pkg.bin['kubectl-raven'], pkg.bin.raven, 'both bins run the same program');
  const dir = await tempDir(t);
  // As npm links a bin: the script made executable (its #! line runs node), a symlink named kubectl-raven.
  const target = join(root, pkg.bin['kubectl-raven'] ?? '');
  await chmod(target, 0o755);
  await symlink(target, join(dir, 'kubectl-raven'));
  const env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}`, KUBECONFIG: plane.kubeconfig };
  const kubectl = await which('kubectl');
  const args = ['raven', 'get', 'namespaces', 'default', '-o', 'name'];
  // kubectl finds kubectl-raven on PATH; without kubectl, run the bin as kubectl would.
  const { stdout } =
    kubectl === undefined
      ? await run(join(dir, 'kubectl-raven'), args.slice(1), { env })
      : await run(kubectl, args, { env });
  assert.equal(stdout, 'namespace/default\n');
  const direct = await run(join(dir, 'kubectl-raven'), ['get', 'namespaces', 'default', '-o', 'name'], {
    env,
  });
  assert.equal(direct.stdout, 'namespace/default\n');
});

test('the Docs line of raven --help and the Details of every command’s help name pages that exist, by absolute path', async (t) => {
  // From another directory, as a user runs it: a path relative to the package would not be found.
  const elsewhere = await tempDir(t);
  for (const args of [
    ['--help'],
    ...['watch', 'get', 'run', 'check', 'ui', 'completion'].map((c) => [c, '--help']),
  ]) {
    const help = await runRaven(args, {
      cwd: elsewhere,
      command: [process.execPath, join(root, 'dist', 'cli', 'main.js')],
    });
    assert.equal(help.code, 0, `raven ${args.join(' ')}: ${help.stderr}`);
    const pages = [...help.stdout.matchAll(/(?:Docs|Details): (\S+?)\.?(?:\s|$)/g)].map((m) => m[1] ?? '');
    if (args[0] === 'check') continue; // its help names no page
    assert.ok(pages.length > 0, `raven ${args.join(' ')} names no page:\n${help.stdout}`);
    for (const page of pages) {
      assert.ok(isAbsolute(page), `raven ${args.join(' ')}: ${page} is not an absolute path`);
      assert.ok(existsSync(page), `raven ${args.join(' ')}: ${page} does not exist`);
    }
  }
});

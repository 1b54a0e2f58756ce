/**
 * Running the real helm and kustomize (built by test/harness/deploy-tools.ts) on the chart in
 * deploy/helm/raven and the kustomizations, for the deployment tests.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { ensureDeployTools } from '../harness/deploy-tools.js';
import type { Manifest } from './deploy-manifests.js';

export const repo = resolve(import.meta.dirname, '..', '..');
export const chart = join(repo, 'deploy', 'helm', 'raven');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function exec(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  const child = spawn(file, args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((done, fail) => {
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A scratch directory for the test: helm's own config and cache, values files. */
export async function scratch(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-helm-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const log = (line: string): void => void process.stderr.write(`deploy-tools: ${line}\n`);

export async function helm(dir: string, args: string[]): Promise<Run> {
  const { helm } = await ensureDeployTools(log);
  return exec(helm, args, {
    ...process.env,
    HELM_CACHE_HOME: join(dir, 'cache'),
    HELM_CONFIG_HOME: join(dir, 'config'),
    HELM_DATA_HOME: join(dir, 'data'),
  });
}

export async function kustomize(path: string): Promise<Manifest[]> {
  const { kustomize } = await ensureDeployTools(log);
  const built = await exec(kustomize, ['build', path]);
  assert.equal(built.code, 0, built.stderr);
  return documents(built.stdout);
}

export function documents(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => {
      assert.deepEqual(d.errors, [], 'the output parses');
      return d.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

/** `helm template` of the chart with these values; the Run when it fails. */
export async function template(
  dir: string,
  values: object,
  ns = 'raven',
): Promise<{ run: Run; objects: Manifest[] }> {
  const file = join(dir, `values-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, stringify(values));
  const run = await helm(dir, ['template', 'raven', chart, '--namespace', ns, '-f', file]);
  return { run, objects: run.code === 0 ? documents(run.stdout) : [] };
}

export async function rendered(dir: string, values: object, ns?: string): Promise<Manifest[]> {
  const { run, objects } = await template(dir, values, ns);
  assert.equal(run.code, 0, run.stderr);
  return objects;
}

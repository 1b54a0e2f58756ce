/**
 * The ReplicaKeeper custom resource (raven.example.com/v1): its type, where it is served, and
 * installing its definition. `installReplicaKeeperCrd` is idempotent and returns once the
 * apiserver serves the resource (the definition's `Established` condition), so informers started
 * afterwards do not begin with 404s.
 */
import { readFile } from 'node:fs/promises';
import type { PodSpec } from 'kubernetes-types/core/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { parse } from 'yaml';
import type { KubeClient } from '../../src/client/kube-client.js';
import type { ResourceRef } from '../../src/client/resource-path.js';
import { isAlreadyExists, isNotFound } from '../../src/errors/classify.js';
import { sleep, systemClock, type Clock } from '../../src/util/clock.js';
import { silentLogger, type Logger } from '../../src/util/logger.js';

export interface ReplicaKeeperSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
    spec: PodSpec;
  };
}

export interface ReplicaKeeperStatus {
  /** Pods controlled by the keeper and not terminating, as last observed by the controller. */
  replicas?: number;
  /** The `metadata.generation` of the spec that `replicas` was counted for. */
  observedGeneration?: number;
}

export interface ReplicaKeeper {
  apiVersion?: 'raven.example.com/v1';
  kind?: 'ReplicaKeeper';
  metadata?: ObjectMeta;
  spec?: ReplicaKeeperSpec;
  status?: ReplicaKeeperStatus;
}

export const replicaKeeperKind = 'ReplicaKeeper';
export const replicaKeeperApiVersion = 'raven.example.com/v1';
export const replicaKeeperCrdName = 'replicakeepers.raven.example.com';

export const replicaKeepers: ResourceRef = {
  group: 'raven.example.com',
  version: 'v1',
  resource: 'replicakeepers',
  namespaced: true,
};

export const pods: ResourceRef = { group: '', version: 'v1', resource: 'pods', namespaced: true };

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const crdFile = new URL('./replicakeeper-crd.yaml', import.meta.url);

interface Crd {
  metadata?: ObjectMeta;
  status?: { conditions?: { type: string; status: string; message?: string }[] };
}

/** The definition shipped next to this file. */
export async function readReplicaKeeperCrd(): Promise<Crd> {
  return parse(await readFile(crdFile, 'utf8')) as Crd;
}

export interface InstallOptions {
  signal?: AbortSignal;
  logger?: Logger;
  clock?: Clock;
  /** How long to wait for the definition to be served; default 60 s. */
  timeoutMs?: number;
}

/**
 * Create the ReplicaKeeper definition unless it exists, and wait until it is established. An
 * existing definition is left as it is: whoever installed it owns it.
 *
 * @example
 * await installReplicaKeeperCrd(client, { signal });
 */
export async function installReplicaKeeperCrd(
  client: Pick<KubeClient, 'request'>,
  options: InstallOptions = {},
): Promise<void> {
  const { signal } = options;
  const log = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  const path = `${crdPath}/${replicaKeeperCrdName}`;
  let crd = await getCrd(client, path, signal);
  if (crd === undefined) {
    try {
      crd = await client.request<Crd>({
        method: 'POST',
        path: crdPath,
        body: await readReplicaKeeperCrd(),
        ...(signal === undefined ? {} : { signal }),
      });
      log.info({ crd: replicaKeeperCrdName }, 'installed the custom resource definition');
    } catch (err) {
      // Another replica of the controller installed it at the same moment.
      if (!isAlreadyExists(err)) throw err;
    }
  }
  const deadline = clock.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const conditions = crd?.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (clock.now() >= deadline) {
      const why = conditions.map((c) => `${c.type}=${c.status} ${c.message ?? ''}`).join('; ');
      throw new Error(
        `${replicaKeeperCrdName} is not established after ${options.timeoutMs ?? 60_000} ms: ${why}`,
      );
    }
    await sleep(clock, 200, signal);
    crd = await getCrd(client, path, signal);
  }
}

async function getCrd(
  client: Pick<KubeClient, 'request'>,
  path: string,
  signal: AbortSignal | undefined,
): Promise<Crd | undefined> {
  try {
    return await client.request<Crd>({ method: 'GET', path, ...(signal === undefined ? {} : { signal }) });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

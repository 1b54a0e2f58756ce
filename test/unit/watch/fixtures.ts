/**
 * Shared fixtures for the decoding tests: realistic objects (with managedFields, multi-byte UTF-8,
 * escaped strings) and helpers that feed bytes to a decoder in chosen chunks.
 */

/** A pod shaped like the apiserver sends it, including managedFields and awkward strings. */
export function realisticPod(
  name: string,
  resourceVersion: string,
  namespace = 'team-a',
): Record<string, unknown> {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: 'web-',
      namespace,
      uid: `0b6f2c9e-${name}-4c1d-9a8e-1f2e3d4c5b6a`,
      resourceVersion,
      creationTimestamp: '2024-05-01T10:00:00Z',
      labels: { app: 'web', 'café.example.com/tier': 'front', team: '日本' },
      annotations: {
        note: 'says "resourceVersion": "999" and \\ backslashes 😀',
        'kubectl.kubernetes.io/last-applied-configuration':
          '{"metadata":{"name":"web","resourceVersion":"1","managedFields":[]},"spec":{}}\n',
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d9c', uid: 'rs-uid', controller: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-05-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} }, 'f:ownerReferences': {} } },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          subresource: 'status',
          fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } } } },
        },
      ],
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        { name: 'web', image: 'nginx:1.27', env: [{ name: 'GREETING', value: 'héllo\tworld\u2028' }] },
      ],
    },
    status: { phase: 'Running', podIP: '10.0.0.7', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

/** A sample watch stream: every event type, multi-byte characters, a 410 ERROR at the end. */
export function sampleWatchEvents(): Record<string, unknown>[] {
  return [
    { type: 'ADDED', object: realisticPod('web-0', '101') },
    { type: 'MODIFIED', object: realisticPod('web-é', '102') },
    { type: 'BOOKMARK', object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '103' } } },
    { type: 'DELETED', object: realisticPod('web-日本', '104', 'ns-😀') },
    {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: 'too old resource version: 1 (104)',
        reason: 'Expired',
        code: 410,
      },
    },
  ];
}

export function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** Newline-delimited JSON, as a watch body. */
export function ndjson(events: readonly unknown[]): string {
  return events.map((event) => `${JSON.stringify(event)}\n`).join('');
}

/** An async body yielding the given chunks. */
export async function* body(chunks: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) {
    await Promise.resolve();
    yield chunk;
  }
}

/** `bytes` cut into pieces of `size` bytes (the last may be shorter). */
export function chunksOf(bytes: Uint8Array, size: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Run `iterable` to the end and return what it threw (failing when it does not throw). */
export async function failureOf(iterable: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of iterable) {
      // drain
    }
  } catch (err) {
    return err;
  }
  throw new Error('expected the iteration to fail');
}

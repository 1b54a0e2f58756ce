/**
 * A namespaced custom resource made for one test: a CRD in a group of its own that keeps any
 * field, deleted after the test, returned once the apiserver serves it and discovery lists it (so
 * that raven resolves its name at once).
 */
import type { TestContext } from 'node:test';
import { randomBytes } from 'node:crypto';
import type { ControlPlane } from '../harness/control-plane.js';
import { ok, until } from './daemon-process.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

export interface TestCrdNames {
  plural: string;
  singular: string;
  kind: string;
  shortNames?: string[];
}

export interface TestCrd {
  group: string;
  /** `plural.group`: the CRD's name, and the resource name raven takes. */
  name: string;
  /** The collection's path in `namespace`. */
  path: (namespace: string) => string;
  /** Its URL for DELETE (the test may delete it itself; the clean-up then finds it gone). */
  crdPath: string;
}

export async function testCrd(
  t: TestContext,
  plane: ControlPlane,
  names: TestCrdNames,
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string; priority?: number }[],
): Promise<TestCrd> {
  const group = `e2e-${randomBytes(4).toString('hex')}.raven.test`;
  const name = `${names.plural}.${group}`;
  const crdPath = `${CRDS}/${name}`;
  await ok(
    plane.adminRequest('POST', CRDS, {
      metadata: { name },
      spec: {
        group,
        scope: 'Namespaced',
        names,
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            ...(additionalPrinterColumns === undefined ? {} : { additionalPrinterColumns }),
          },
        ],
      },
    }),
  );
  t.after(() => plane.adminRequest('DELETE', crdPath));
  await until('the CRD is served and discovered', async () => {
    const [list, groups] = await Promise.all([
      plane.adminRequest('GET', `/apis/${group}/v1/${names.plural}`),
      plane.adminRequest('GET', '/apis'),
    ]);
    return list.status === 200 && groups.body.includes(`"${group}"`);
  });
  return {
    group,
    name,
    crdPath,
    path: (namespace) => `/apis/${group}/v1/namespaces/${namespace}/${names.plural}`,
  };
}

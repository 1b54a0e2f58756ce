/**
 * The harness's control plane itself: a port taken between being chosen and being bound (by a
 * second test suite on the machine, or a port handed out twice) must not fail a run. The plane
 * starts again on fresh ports.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePorts } from '../harness/ports.js';
import { privateCluster } from '../harness/test-cluster.js';

test('a control plane whose apiserver port is taken at start-up starts again on fresh ports', async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const address = squatter.address();
  assert.ok(typeof address === 'object' && address !== null);
  const chosen: number[][] = [];
  try {
    const plane = await privateCluster({
      choosePorts: async (count) => {
        const ports = await freePorts(count);
        // The first choice hands the apiserver (third port) the squatter's port.
        if (chosen.length === 0) ports[2] = address.port;
        chosen.push(ports);
        return ports;
      },
    });
    try {
      assert.equal(chosen.length, 2, 'the plane chose its ports a second time');
      assert.notEqual(plane.state.ports.apiserver, address.port);
      const version = await plane.adminRequest('GET', '/version');
      assert.equal(version.status, 200, version.body);
    } finally {
      await plane.stop();
    }
  } finally {
    squatter.close();
  }
});

test('freePorts hands out distinct ports', async () => {
  const ports = await freePorts(64);
  assert.equal(new Set(ports).size, 64);
  assert.ok(ports.every((port) => port > 0));
});

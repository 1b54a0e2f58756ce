import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  errorKind,
  isConflict,
  isNotFound,
  isNotSent,
  isOpenStackImmutable,
  isOpenStackOverQuota,
  isOpenStackUnavailable,
  isRetryable,
  openStackFaultType,
} from '../../../src/errors/classify.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import { OpenStackError, parseFault } from '../../../src/errors/openstack-error.js';
import { neutronError, octaviaFault, startOpenStackServer } from './openstack-server.js';
import { noauthClient } from './helpers.js';

test('a Neutron conflict names the call, the resource, the status and the NeutronError', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('POST /network/v2.0/ports', {
    status: 409,
    body: neutronError(
      'IpAddressAlreadyAllocated',
      'IP address 10.0.0.5 already allocated in subnet 3b5c7a1e-1111-2222-3333-444455556666',
    ),
    headers: { 'x-openstack-request-id': 'req-1' },
  });
  await assert.rejects(
    client.neutron.ports.create({ network_id: 'n1', name: 'web-1', fixed_ips: [{ ip_address: '10.0.0.5' }] }),
    (err: unknown) => {
      assert.ok(err instanceof OpenStackError);
      assert.equal(err.service, 'network');
      assert.equal(err.call, 'POST /v2.0/ports');
      assert.deepEqual(err.resource, { type: 'port', name: 'web-1' });
      assert.equal(err.status, 409);
      assert.equal(err.faultType, 'IpAddressAlreadyAllocated');
      assert.equal(err.requestId, 'req-1');
      assert.equal(
        err.message,
        'POST /v2.0/ports (port "web-1"): 409 IpAddressAlreadyAllocated: IP address 10.0.0.5 already allocated in subnet 3b5c7a1e-1111-2222-3333-444455556666 [request req-1]',
      );
      assert.ok(isConflict(err));
      assert.ok(!isRetryable(err));
      assert.equal(openStackFaultType(err), 'IpAddressAlreadyAllocated');
      assert.equal(errorKind(err), 'openstack:409');
      return true;
    },
  );
});

test('an Octavia fault names the resource by id and keeps the faultstring', async () => {
  const server = await startOpenStackServer();
  const { client } = noauthClient(server.url);
  server.on('GET /lb/v2/lbaas/loadbalancers/lb-9', {
    status: 404,
    body: octaviaFault('Load Balancer lb-9 not found.'),
  });
  await assert.rejects(client.octavia.loadBalancers.get('lb-9'), (err: unknown) => {
    assert.ok(err instanceof OpenStackError);
    assert.equal(err.service, 'load-balancer');
    assert.equal(
      err.message,
      'GET /v2/lbaas/loadbalancers/lb-9 (loadbalancer lb-9): 404 Client: Load Balancer lb-9 not found.',
    );
    assert.ok(isNotFound(err));
    return true;
  });
});

test("the fault parser reads every service's error format", () => {
  assert.deepEqual(
    parseFault(
      JSON.stringify(neutronError('NetworkInUse', 'Unable to complete operation on network n1.', 'x')),
    ),
    {
      type: 'NetworkInUse',
      message: 'Unable to complete operation on network n1.',
      detail: 'x',
    },
  );
  assert.deepEqual(parseFault(JSON.stringify(octaviaFault('Invalid input', 'Client'))), {
    type: 'Client',
    message: 'Invalid input',
  });
  assert.deepEqual(
    parseFault('{"code": 404, "title": "Not Found", "description": "The resource could not be found."}'),
    {
      type: 'Not Found',
      message: 'The resource could not be found.',
    },
  );
  assert.deepEqual(parseFault('{"error": {"code": 401, "title": "Unauthorized", "message": "no"}}'), {
    type: 'Unauthorized',
    message: 'no',
  });
  assert.deepEqual(parseFault('<html><body><h1>502 Bad Gateway</h1></body></html>'), {
    message: '502 Bad Gateway',
  });
  assert.deepEqual(parseFault(''), {});
});

function fault(
  status: number | undefined,
  service: 'network' | 'load-balancer',
  type: string,
  message: string,
): OpenStackError {
  return new OpenStackError({
    service,
    call: 'PUT /x',
    ...(status === undefined ? {} : { status }),
    fault: { type, message },
  });
}

test('immutable is an Octavia 409 about a pending load balancer, not any conflict', () => {
  const immutable = fault(
    409,
    'load-balancer',
    'Client',
    'Load Balancer lb-1 is immutable and cannot be updated.',
  );
  assert.ok(isOpenStackImmutable(immutable));
  assert.ok(isConflict(immutable));
  assert.ok(
    !isOpenStackImmutable(
      fault(
        409,
        'load-balancer',
        'Client',
        'Another Listener on this Load Balancer is already using protocol_port 80',
      ),
    ),
  );
  assert.ok(!isOpenStackImmutable(fault(409, 'network', 'Conflict', 'immutable')));
});

test('over-quota is recognised for Neutron and Octavia', () => {
  assert.ok(
    isOpenStackOverQuota(fault(409, 'network', 'OverQuota', "Quota exceeded for resources: ['port'].")),
  );
  assert.ok(
    isOpenStackOverQuota(
      fault(403, 'load-balancer', 'Client', 'Quota has been met for resources: Load Balancer'),
    ),
  );
  assert.ok(!isOpenStackOverQuota(fault(409, 'network', 'NetworkInUse', 'in use')));
  assert.ok(!isRetryable(fault(409, 'network', 'OverQuota', 'q')));
});

test('unavailable covers no answer and 502 to 504, and those are retryable', () => {
  const noAnswer = new OpenStackError({
    service: 'network',
    call: 'GET /v2.0/ports',
    cause: new TransportError('refused', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    }),
  });
  assert.ok(isOpenStackUnavailable(noAnswer));
  assert.ok(isRetryable(noAnswer));
  assert.ok(isNotSent(noAnswer));
  assert.equal(errorKind(noAnswer), 'openstack:transport');
  assert.match(noAnswer.message, /^GET \/v2.0\/ports: no answer: refused$/);
  assert.ok(isOpenStackUnavailable(fault(503, 'network', 'ServiceUnavailable', 'down')));
  assert.ok(isRetryable(fault(500, 'network', 'HTTPInternalServerError', 'boom')));
  assert.ok(!isRetryable(fault(501, 'network', 'NotImplemented', 'no')));
  assert.ok(!isOpenStackUnavailable(fault(500, 'network', 'HTTPInternalServerError', 'boom')));
});

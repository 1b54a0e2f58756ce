import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { CloudEventsSink, cloudEventType } from '../../../../src/raven/sinks/cloudevents-sink.js';
import { HttpReceiver } from '../../../harness/http-receiver.js';
import { sampleEvent } from './fixtures.js';

let receiver: HttpReceiver;
const dispatcher = new Agent();

before(async () => {
  receiver = await HttpReceiver.start();
});
after(async () => {
  await receiver.close();
  await dispatcher.close();
});

test('posts a structured-mode CloudEvent 1.0 whose data is the change event', async () => {
  const event = sampleEvent();
  const sink = new CloudEventsSink({
    name: 'ce',
    url: receiver.url('/events'),
    source: '/raven/test',
    dispatcher,
  });
  await sink.deliver(event, new AbortController().signal);
  const [req] = await receiver.waitForRequests(1);
  assert.ok(req);
  assert.equal(req.headers['content-type'], 'application/cloudevents+json; charset=utf-8');
  assert.deepEqual(req.json, {
    specversion: '1.0',
    id: event.id,
    source: '/raven/test',
    type: 'io.k8s.raven.deployments.apps.modified',
    subject: 'default/web',
    time: '2024-05-01T12:00:00.000Z',
    datacontenttype: 'application/json',
    ravenwatcher: 'deploys',
    ravenorigin: 'live',
    data: event,
  });
});

test('the type names the resource as resource.group, the core group as the resource alone', () => {
  const pod = sampleEvent({
    type: 'added',
    resource: { group: '', version: 'v1', resource: 'pods', kind: 'Pod' },
  });
  assert.equal(cloudEventType(pod), 'io.k8s.raven.pods.added');
  assert.equal(
    cloudEventType(sampleEvent({ type: 'deleted' }), 'com.example'),
    'com.example.deployments.apps.deleted',
  );
});

test('an empty source is a config error', () => {
  assert.throws(
    () => new CloudEventsSink({ name: 'ce', url: 'https://example.com', source: '' }),
    /sinks\.ce\.source/,
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { syslogMessage } from '../../../../src/raven/sinks/syslog-sink.js';
import { sampleEvent } from './fixtures.js';

test('a change is one RFC 5424 message with the change type as MSGID and the event as JSON', () => {
  const event = sampleEvent({ name: 'web' });
  const message = syslogMessage(event, { facility: 'local0', appName: 'raven', hostname: 'node a' });
  const header = `<133>1 ${event.time} node_a raven ${process.pid} ${event.type} - `;
  assert.ok(message.startsWith(header), message);
  assert.deepEqual(JSON.parse(message.slice(header.length)), JSON.parse(JSON.stringify(event)));
});

test('a Warning occurrence has severity warning in the facility given', () => {
  const event = {
    ...sampleEvent(),
    occurrence: { type: 'Warning' } as NonNullable<ReturnType<typeof sampleEvent>['occurrence']>,
  };
  assert.match(syslogMessage(event, { facility: 'auth', appName: 'raven', hostname: 'h' }), /^<36>1 /);
});

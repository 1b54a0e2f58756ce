import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiErrorFromResponse } from '../../../src/errors/api-error.js';
import { TransportError } from '../../../src/errors/raven-error.js';
import { SHORT_MESSAGE_MAX, shortErrorMessage } from '../../../src/errors/short-message.js';

const watchPath =
  '/api/v1/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=314&resourceVersion=268&includeObject=Object';

function transport(message: string, code?: string): TransportError {
  const cause = Object.assign(new Error(message), code === undefined ? {} : { code });
  return new TransportError(`GET ${watchPath}: ${message}${code === undefined ? '' : ` (${code})`}`, {
    cause,
  });
}

test('a refused connection is "connection refused", without the request URL', () => {
  assert.equal(
    shortErrorMessage(transport('connect ECONNREFUSED 127.0.0.1:37609', 'ECONNREFUSED')),
    'connection refused',
  );
});

test('a reset and a connect timeout are named in words', () => {
  assert.equal(shortErrorMessage(transport('read ECONNRESET', 'ECONNRESET')), 'connection reset');
  assert.equal(
    shortErrorMessage(transport('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
    'connect timeout',
  );
});

test('an HTTP/2 GOAWAY says the server closed the connection', () => {
  assert.equal(
    shortErrorMessage(transport('HTTP/2: "GOAWAY" frame received with code 0')),
    'the server closed the connection (HTTP/2 GOAWAY)',
  );
});

test('another transport failure keeps its own message but not the request', () => {
  assert.equal(shortErrorMessage(transport('unexpected end of stream')), 'unexpected end of stream');
});

test('an apiserver answer gives its status, reason and message, without the request', () => {
  const error = apiErrorFromResponse(
    503,
    JSON.stringify({ kind: 'Status', code: 503, reason: 'ServiceUnavailable', message: 'etcd is not ready' }),
    { method: 'GET', path: watchPath },
  );
  assert.match(error.message, /includeObject/, 'the full message names the request');
  assert.equal(shortErrorMessage(error), '503 ServiceUnavailable: etcd is not ready');
});

test('a long message is cut to one line', () => {
  const text = shortErrorMessage(new Error(`first line\n${'x'.repeat(300)}`));
  assert.equal(text.length, SHORT_MESSAGE_MAX);
  assert.ok(text.startsWith('first line x'));
  assert.ok(text.endsWith('…'));
});

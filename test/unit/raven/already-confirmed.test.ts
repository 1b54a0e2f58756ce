import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alreadyConfirmed } from '../../../src/raven/delivery/already-confirmed.js';
import type { ChangeType } from '../../../src/raven/model/change-event.js';
import type { ConfirmedState } from '../../../src/raven/checkpoint/checkpoint-store.js';
import { changeEvent, pod } from './checkpoint/fixtures.js';

const change = (type: ChangeType, rv: string, options: { uid?: string; tombstone?: boolean } = {}) => ({
  ...changeEvent(type, pod('d', 'a', { rv, uid: options.uid ?? 'u1' })),
  tombstone: options.tombstone ?? false,
});
const live = (rv: string, uid = 'u1'): ConfirmedState => ({ uid, resourceVersion: rv, deleted: false });
const gone = (rv: string, uid = 'u1'): ConfirmedState => ({ uid, resourceVersion: rv, deleted: true });

test('a change at or below the state a sink confirmed is one it has; a newer one is not', () => {
  assert.equal(alreadyConfirmed(change('modified', '105'), live('110')), true);
  assert.equal(alreadyConfirmed(change('modified', '110'), live('110')), true);
  assert.equal(alreadyConfirmed(change('modified', '111'), live('110')), false);
  assert.equal(alreadyConfirmed(change('added', '99'), live('110')), true);
});

test('resourceVersions compare as numbers, not text', () => {
  assert.equal(alreadyConfirmed(change('modified', '99'), live('100')), true);
  assert.equal(alreadyConfirmed(change('modified', '100'), live('99')), false);
});

test('a change to an object the sink never had is delivered; a deletion of one is not', () => {
  assert.equal(alreadyConfirmed(change('added', '5'), undefined), false);
  assert.equal(alreadyConfirmed(change('modified', '5'), undefined), false);
  assert.equal(alreadyConfirmed(change('deleted', '5'), undefined), true);
  assert.equal(alreadyConfirmed(change('deleted', '5', { tombstone: true }), undefined), true);
});

test('after a confirmed deletion, older changes are skipped and a re-creation is delivered', () => {
  assert.equal(alreadyConfirmed(change('modified', '104'), gone('105')), true);
  assert.equal(alreadyConfirmed(change('deleted', '105'), gone('105')), true);
  assert.equal(alreadyConfirmed(change('added', '107', { uid: 'u2' }), gone('105')), false);
});

test('the old incarnation of a re-created object is skipped once the sink has the new one', () => {
  assert.equal(alreadyConfirmed(change('modified', '102', { uid: 'u1' }), live('110', 'u2')), true);
  assert.equal(alreadyConfirmed(change('deleted', '105', { uid: 'u1' }), live('110', 'u2')), true);
});

test('an inferred deletion is delivered wherever the object is still live, whatever the versions', () => {
  // The relist's tombstone carries the last state the watcher knew: 90, older than the sink's 110.
  assert.equal(alreadyConfirmed(change('deleted', '90', { tombstone: true }), live('110')), false);
  assert.equal(alreadyConfirmed(change('deleted', '90', { tombstone: true }), gone('95')), true);
});

test('resourceVersions that cannot be ordered are skipped only when equal', () => {
  assert.equal(alreadyConfirmed(change('modified', 'abc'), live('abc')), true);
  assert.equal(alreadyConfirmed(change('modified', 'abd'), live('abc')), false);
  assert.equal(alreadyConfirmed(change('modified', '7'), live('abc')), false);
});

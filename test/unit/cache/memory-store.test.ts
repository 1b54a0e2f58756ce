import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore } from '../../../src/cache/memory-store.js';
import { RavenError } from '../../../src/errors/raven-error.js';
import { makeObjectKey } from '../../../src/client/object-key.js';
import { pod, storeContract } from './store-contract.js';

storeContract('MemoryStore', (options) => new MemoryStore(options));

test('redefining the built-in namespace index is refused', () => {
  assert.throws(() => new MemoryStore({ indexers: { namespace: () => [] } }), RavenError);
});

test('objects are frozen by default under NODE_ENV=development or test and left alone otherwise', () => {
  const saved = process.env.NODE_ENV;
  try {
    for (const env of ['development', 'test']) {
      process.env.NODE_ENV = env;
      const dev = new MemoryStore();
      dev.add(pod('d', 'a'));
      assert.equal(Object.isFrozen(dev.get(makeObjectKey('a', 'd'))?.metadata), true, env);
    }

    for (const env of ['production', undefined]) {
      if (env === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = env;
      const prod = new MemoryStore();
      prod.add(pod('d', 'a'));
      assert.equal(Object.isFrozen(prod.get(makeObjectKey('a', 'd'))), false, String(env));
    }
  } finally {
    if (saved === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = saved;
  }
});

/**
 * The Redis sink's one write: a Lua script that appends each change of a batch to the stream
 * (`XADD ... MAXLEN ~`) unless the stream already has it or a later change of the same object, and
 * records what it appended. Scripts run atomically, so the check and the append cannot be split by a crash or by
 * another Raven.
 *
 * What "already has it" means:
 * - a change: a per-object key (`<stream>:raven:last:<uid>`) holds the resourceVersion and change
 *   rank (0 added or modified, 1 deleted) of the last change appended for the object. A change
 *   whose (resourceVersion, rank) is not after it is skipped. Raven delivers an object's changes
 *   in order and replays them in order after a restart, so a skipped change is one the stream
 *   has. resourceVersions of decimal digits (etcd's) compare as numbers; any other form is only
 *   recognised when it repeats the last one exactly. The rank separates a deletion Raven inferred
 *   (a tombstone, carrying the object's last resourceVersion) from the change before it.
 * - a gap notice: a key per notice (`<stream>:raven:gap:<id>`), set only if absent.
 *
 * The keys expire `dedupeTtlSeconds` after an object's last change, so memory follows the objects
 * that changed recently, not the number of changes.
 */
import type { SinkRecord } from '../model/gap-notice.js';
import { recordJson } from '../model/record-json.js';

/**
 * One call appends a batch: `KEYS[1]` is the stream, `KEYS[1 + i]` the de-duplication key of the
 * i-th change; `ARGV` holds `maxLen`, the TTL, then per change its kind, resourceVersion, rank,
 * the number of its stream fields and the fields. A batch never holds two changes of one object
 * (the delivery layer hands a sink one change per object at a time), so each check sees the state
 * before the batch. Returns how many changes were appended (the others were already there).
 */
export const APPEND_SCRIPT = `
local stream, maxlen, ttl = KEYS[1], ARGV[1], ARGV[2]
local at, appended = 3, 0
for k = 2, #KEYS do
  local seen, kind, rv, rank = KEYS[k], ARGV[at], ARGV[at + 1], ARGV[at + 2]
  local first, last = at + 4, at + 3 + tonumber(ARGV[at + 3])
  at = last + 1
  local fresh = true
  if kind == 'gap' then
    fresh = redis.call('SET', seen, '1', 'NX', 'EX', ttl) and true or false
  else
    local previous = redis.call('GET', seen)
    if previous then
      local lrv, lrank = string.match(previous, '^(.*):(%d)$')
      if lrv and string.match(rv, '^%d+$') and string.match(lrv, '^%d+$') then
        if #rv ~= #lrv then fresh = #rv > #lrv
        elseif rv ~= lrv then fresh = rv > lrv
        else fresh = rank > lrank end
      else
        fresh = not (rv == lrv and rank == lrank)
      end
    end
    if fresh then redis.call('SET', seen, rv .. ':' .. rank, 'EX', ttl) end
  end
  if fresh then
    redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', unpack(ARGV, first, last))
    appended = appended + 1
  end
end
return appended
`;

/** One change as the script takes it: its de-duplication key and its arguments. */
export interface AppendItem {
  key: string;
  args: string[];
}

/** The script's key and arguments for one record. */
export function appendItem(stream: string, record: SinkRecord): AppendItem {
  const fields = ['id', record.id, 'type', record.type, 'event', recordJson(record)];
  if (record.type === 'gap')
    return {
      key: `${stream}:raven:gap:${record.id}`,
      args: ['gap', '', '0', String(fields.length), ...fields],
    };
  const object = record.uid ?? `${record.namespace ?? ''}/${record.name}`;
  const rank = record.type === 'deleted' ? '1' : '0';
  return {
    key: `${stream}:raven:last:${object}`,
    args: ['change', record.resourceVersion ?? '', rank, String(fields.length), ...fields],
  };
}

/** The script's whole argument list for a batch: the key count, the keys, then the arguments. */
export function appendBatchArguments(
  stream: string,
  items: readonly AppendItem[],
  options: { maxLen: number; dedupeTtlSeconds: number },
): string[] {
  return [
    String(1 + items.length),
    stream,
    ...items.map((i) => i.key),
    String(options.maxLen),
    String(options.dedupeTtlSeconds),
    ...items.flatMap((i) => i.args),
  ];
}

/**
 * The Redis sink's one write: a Lua script that appends a change to the stream (`XADD ... MAXLEN ~`)
 * unless the stream already has it or a later change of the same object, and records what it
 * appended. Scripts run atomically, so the check and the append cannot be split by a crash or by
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
import type { SinkRecord } from '../gap-notice.js';

export const APPEND_SCRIPT = `
local stream, seen = KEYS[1], KEYS[2]
local maxlen, ttl, kind, rv, rank = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if kind == 'gap' then
  if not redis.call('SET', seen, '1', 'NX', 'EX', ttl) then return false end
else
  local last = redis.call('GET', seen)
  if last then
    local lrv, lrank = string.match(last, '^(.*):(%d)$')
    local newer
    if lrv and string.match(rv, '^%d+$') and string.match(lrv, '^%d+$') then
      if #rv ~= #lrv then newer = #rv > #lrv
      elseif rv ~= lrv then newer = rv > lrv
      else newer = rank > lrank end
    else
      newer = not (rv == lrv and rank == lrank)
    end
    if not newer then return false end
  end
  redis.call('SET', seen, rv .. ':' .. rank, 'EX', ttl)
end
return redis.call('XADD', stream, 'MAXLEN', '~', maxlen, '*', unpack(ARGV, 6))
`;

/** The script's keys and arguments for one record. */
export function appendArguments(
  stream: string,
  record: SinkRecord,
  options: { maxLen: number; dedupeTtlSeconds: number },
): string[] {
  const fields = ['id', record.id, 'type', record.type, 'event', JSON.stringify(record)];
  const common = [String(options.maxLen), String(options.dedupeTtlSeconds)];
  if (record.type === 'gap')
    return [stream, `${stream}:raven:gap:${record.id}`, ...common, 'gap', '', '0', ...fields];
  const object = record.uid ?? `${record.namespace ?? ''}/${record.name}`;
  const rank = record.type === 'deleted' ? '1' : '0';
  return [
    stream,
    `${stream}:raven:last:${object}`,
    ...common,
    'change',
    record.resourceVersion ?? '',
    rank,
    ...fields,
  ];
}

/**
 * Which field manager changed which paths: the entries of `metadata.managedFields` that differ
 * from the previous state's ({@link FieldManagerChange}, on every `modified` watcher event), laid
 * over the paths that changed.
 *
 * Paths are written as Raven's diffs write them (`spec.replicas`,
 * `metadata.labels["app.kubernetes.io/name"]`, `spec.template.spec.containers[name=web].image`,
 * `spec.finalizers[0]`) and are matched against each entry's `fieldsV1` (`f:spec` → `f:replicas`,
 * `k:{"name":"web"}`, `v:"x"`, `i:0`):
 *
 * - a path is **owned** by an entry when its fieldsV1 holds the path, a field below it (the path is
 *   a map or list item the entry has fields in), or a field above it that it owns whole (an atomic
 *   list or struct: `f:args: {}` owns `args[0]`). A positional `[i]` is resolved through `object`
 *   (the state after the change) to the item's keys or value;
 * - each changed entry is given the paths it owns; where one entry lists a path and another only
 *   owns a field above it whole, the one that lists it owns it (a map whose fields another
 *   manager took is left as `f:data: {}`, which reads like an atomic field owned whole);
 * - the paths no changed entry owns (a field the write removed belongs to nobody afterwards) go to
 *   the writers: the entries that are new or whose time changed (one write request has one field
 *   manager); when no entry's time changed (a second write by the same manager within the same
 *   second), to every changed entry;
 * - an entry is listed when it wrote (new, or its time changed) or owns a changed path. An entry
 *   whose field set only shrank because another manager took or removed its fields is not.
 *
 * Cost: each changed entry's fieldsV1 is parsed once (a few hundred bytes), and each path is one
 * walk down that tree.
 */
import type { FieldManagerChange } from './field-managers.js';

/** One manager's part in a change. */
export interface ChangedBy {
  manager: string;
  /** `Apply` (server-side apply) or `Update` (create, update, patch). */
  operation: string;
  /** When the manager wrote (RFC 3339, seconds), as the apiserver recorded it. */
  time?: string;
  /** The subresource written (`status`, `scale`), absent for the main resource. */
  subresource?: string;
  /** The changed paths attributed to this manager, in the order they were given. */
  paths: string[];
}

type FieldsTree = Record<string, unknown>;

/** One step of a path: a field, a list position, or a list item picked by a field's value. */
type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'item'; field: string; value: string };

/**
 * Attribute `paths` (the paths that changed between the previous state and `object`) to the
 * managers in `changes`. Empty when no entry changed; see the module comment for the rules.
 *
 * @example
 * for await (const event of watcher) {
 *   if (event.type === 'modified' && event.managers !== undefined)
 *     for (const who of changedBy(event.managers, ['spec.replicas'], event.object))
 *       console.log(who.paths, 'by', who.manager, who.operation, who.time);
 * }
 */
export function changedBy(
  changes: readonly FieldManagerChange[],
  paths: readonly string[],
  object: unknown,
): ChangedBy[] {
  if (changes.length === 0) return [];
  const steps = paths.map(parsePath);
  const ownership = changes.map((change) => {
    const tree = parseFields(change.fieldsV1);
    return steps.map((s) => (s === undefined ? NONE : owns(tree, s, 0, object)));
  });
  // An entry that lists the path itself outranks one that owns a field above it whole: a map whose
  // fields another manager took is written `f:data: {}` too, like an atomic field (nothing in
  // fieldsV1 tells them apart), and it does not own what the other entry now lists.
  const best = steps.map((_, p) => Math.max(NONE, ...ownership.map((o) => o[p] ?? NONE)));
  const owned = ownership.map((o) => o.map((level, p) => level !== NONE && level === best[p]));
  const wrote = changes.map((c) => c.change !== 'fields');
  const anyWrote = wrote.some(Boolean);
  const out: ChangedBy[] = [];
  changes.forEach((change, m) => {
    const writer = anyWrote ? (wrote[m] as boolean) : true;
    const mine = owned[m] as boolean[];
    const attributed = paths.filter((_, p) => mine[p] === true || (writer && !owned.some((o) => o[p])));
    if (!writer && attributed.length === 0) return;
    out.push({
      manager: change.manager,
      operation: change.operation,
      ...(change.time === undefined ? {} : { time: change.time }),
      ...(change.subresource === undefined ? {} : { subresource: change.subresource }),
      paths: attributed,
    });
  });
  return out;
}

function parseFields(text: string): FieldsTree {
  try {
    const tree: unknown = JSON.parse(text);
    return typeof tree === 'object' && tree !== null && !Array.isArray(tree) ? (tree as FieldsTree) : {};
  } catch {
    return {};
  }
}

/** How an entry owns a path: not at all, through a field above it owned whole, or listing it. */
const NONE = 0;
const WHOLE = 1;
const LISTED = 2;
type Ownership = typeof NONE | typeof WHOLE | typeof LISTED;

/** How `tree` owns the path `steps[at..]`, with `value` the object's value at this level. */
function owns(tree: FieldsTree, steps: readonly Step[], at: number, value: unknown): Ownership {
  if (at === steps.length) return LISTED;
  // A field owned whole (nothing listed below it: `{}`) owns everything under it. An entry that
  // lists only `.` owns the item or map itself, not the fields in it.
  // The root never is: an empty fieldsV1 owns nothing.
  let leaf = at > 0;
  for (const _ in tree) {
    leaf = false;
    break;
  }
  if (leaf) return WHOLE;
  const step = steps[at] as Step;
  if (step.kind === 'field') {
    const child = tree[`f:${step.name}`];
    return isTree(child) ? owns(child, steps, at + 1, member(value, step.name)) : NONE;
  }
  const list = Array.isArray(value) ? (value as unknown[]) : [];
  let found: Ownership = NONE;
  if (step.kind === 'index') {
    const item = list[step.index];
    for (const key in tree) {
      const child = tree[key];
      if (isTree(child) && itemMatches(key, step.index, item))
        found = Math.max(found, owns(child, steps, at + 1, item)) as Ownership;
    }
    return found;
  }
  for (const key in tree) {
    if (!key.startsWith('k:')) continue;
    const keys = parseKey(key);
    const id = keys?.[step.field];
    if (id === undefined || stringOf(id) !== step.value) continue;
    const child = tree[key];
    const item = list.find((i) => isTree(i) && sameKeys(keys as FieldsTree, i));
    if (isTree(child)) found = Math.max(found, owns(child, steps, at + 1, item)) as Ownership;
  }
  return found;
}

/** Whether the fieldsV1 key `key` names the item at `index`, whose value is `item`. */
function itemMatches(key: string, index: number, item: unknown): boolean {
  if (key.startsWith('i:')) return key === `i:${index}`;
  if (item === undefined) return false;
  if (key.startsWith('v:')) return key === `v:${JSON.stringify(item)}`;
  if (key.startsWith('k:')) {
    const keys = parseKey(key);
    return keys !== undefined && isTree(item) && sameKeys(keys, item);
  }
  return false;
}

function parseKey(key: string): FieldsTree | undefined {
  try {
    const keys: unknown = JSON.parse(key.slice(2));
    return isTree(keys) ? keys : undefined;
  } catch {
    return undefined;
  }
}

/** Every field of `keys` has the same (scalar) value in `item`. */
function sameKeys(keys: FieldsTree, item: FieldsTree): boolean {
  for (const k in keys) if (stringOf(keys[k]) !== stringOf(item[k])) return false;
  return true;
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function isTree(value: unknown): value is FieldsTree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function member(value: unknown, name: string): unknown {
  return isTree(value) ? value[name] : undefined;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*/;

/**
 * The steps of a path as the diff writes it; undefined for a path that cannot be read (it is then
 * owned by nobody).
 */
export function parsePath(path: string): Step[] | undefined {
  const steps: Step[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === '.') i++;
    if (path[i] === '[') {
      if (path[i + 1] === '"') {
        // A quoted key: a JSON string, then `]`.
        let end = i + 2;
        while (end < path.length && path[end] !== '"') end += path[end] === '\\' ? 2 : 1;
        try {
          steps.push({ kind: 'field', name: JSON.parse(path.slice(i + 1, end + 1)) as string });
        } catch {
          return undefined;
        }
        if (path[end + 1] !== ']') return undefined;
        i = end + 2;
        continue;
      }
      // `[3]`, or `[field=value]` up to the `]` that ends the step (a value may hold a `]`).
      let end = path.indexOf(']', i);
      while (end >= 0 && end + 1 < path.length && path[end + 1] !== '.' && path[end + 1] !== '[')
        end = path.indexOf(']', end + 1);
      if (end < 0) return undefined;
      const inside = path.slice(i + 1, end);
      const eq = inside.indexOf('=');
      if (eq < 0) {
        if (!/^\d+$/.test(inside)) return undefined;
        steps.push({ kind: 'index', index: Number(inside) });
      } else {
        steps.push({ kind: 'item', field: inside.slice(0, eq), value: inside.slice(eq + 1) });
      }
      i = end + 1;
      continue;
    }
    const name = IDENT.exec(path.slice(i))?.[0];
    if (name === undefined) return undefined;
    steps.push({ kind: 'field', name });
    i += name.length;
  }
  return steps;
}

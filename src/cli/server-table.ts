/**
 * The apiserver's own columns for `raven watch`: the Table form (`as=Table;g=meta.k8s.io`), which
 * is how the server prints every resource it serves (Events' TYPE/REASON/OBJECT/MESSAGE, a
 * Service's TYPE/CLUSTER-IP/PORT(S), a CRD's additionalPrinterColumns).
 *
 * How the apiserver behaves, and why this is a transport and not a second watch: asked for the
 * Table form with `includeObject=Object`, a list answers one Table per page (rows of cells, each
 * row carrying the full object; `continue` and `remainingItemCount` on the Table's metadata), and
 * a watch answers one Table per event (one row, the object inside it; `columnDefinitions` only in
 * the first event of each stream; bookmarks are Tables too, their row's object carrying the
 * resourceVersion and the initial-events-end annotation). So the objects still arrive, in full,
 * on the same list and watch requests: {@link ServerTable.transport} asks for the Table form and
 * unwraps it back into the plain list and watch bodies the watcher decodes, keeping each row's
 * cells aside (by uid and resourceVersion) for the printer. The watcher, its relists, resumes and
 * diffs are unchanged, and there is one request stream, not a rows stream beside an objects one.
 *
 * Fallback: the Accept header also offers plain JSON, so a server (or aggregated API) that cannot
 * print a resource answers in the plain form; such bodies pass through untouched and the printer
 * uses its own columns.
 */
import type { StreamOptions, StreamResponse } from '../client/kube-client.js';
import { utf8 } from '../watch/decode/bytes.js';
import { LineSplitter } from '../watch/decode/line-splitter.js';
import type { WatchTransport } from '../watch/watcher.js';
import type { KubeObject } from '../client/kube-object.js';

/** The Table form first, plain JSON as the fallback (the order matters: the server takes the first it can serve). */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** One column as the server describes it; priority 0 columns are the default view, > 0 the wide one. */
export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  priority: number;
}

/** What the transport needs from a client: a streamed GET with headers (`KubeClient` provides it). */
export interface TableStreamClient {
  stream(options: StreamOptions): Promise<StreamResponse>;
}

interface TableRow {
  cells?: unknown[];
  object?: KubeObject | null;
}

interface Table {
  kind: 'Table';
  metadata?: Record<string, unknown>;
  columnDefinitions?: ColumnDefinition[] | null;
  rows?: TableRow[] | null;
}

/**
 * Cells kept for objects the printer has not asked for yet. Objects a namespace pattern filters
 * out are never asked for, so the oldest are dropped past this many; far above what a screen
 * shows between two prints.
 */
const MAX_PENDING_ROWS = 50_000;

function isTable(value: unknown): value is Table {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { kind?: unknown }).kind === 'Table' &&
    typeof (value as { apiVersion?: unknown }).apiVersion === 'string' &&
    (value as { apiVersion: string }).apiVersion.startsWith('meta.k8s.io/')
  );
}

function rowKey(object: KubeObject | null | undefined): string | undefined {
  const m = object?.metadata;
  if (m?.uid === undefined || m.resourceVersion === undefined) return undefined;
  return `${m.uid}/${m.resourceVersion}`;
}

const encoder = new TextEncoder();
const NEWLINE = encoder.encode('\n');

/**
 * The server's columns and cells for one watch.
 *
 * @example
 * const table = new ServerTable();
 * const w = watchResource({ transport: table.transport(client), resource, signal });
 * for await (const e of w) if (e.type === 'added') console.log(table.columns, table.take(e.object));
 */
export class ServerTable {
  #columns: ColumnDefinition[] | undefined;
  readonly #cells = new Map<string, unknown[]>();

  /** The server's column definitions, once a Table has arrived (undefined: the plain form). */
  get columns(): readonly ColumnDefinition[] | undefined {
    return this.#columns;
  }

  /** The cells the server printed for this state of the object (each state is taken once). */
  take(object: KubeObject): unknown[] | undefined {
    const key = rowKey(object);
    if (key === undefined) return undefined;
    const cells = this.#cells.get(key);
    this.#cells.delete(key);
    return cells;
  }

  /** A transport for the watcher that asks for the Table form and hands it plain bodies. */
  transport(client: TableStreamClient): WatchTransport {
    return {
      stream: async ({ path, query, signal }) => {
        const res = await client.stream({
          path,
          query: { ...query, includeObject: 'Object' },
          headers: { accept: TABLE_ACCEPT },
          ...(signal === undefined ? {} : { signal }),
        });
        const body = query?.watch === true ? this.#unwrapWatch(res.body) : this.#unwrapList(res.body);
        return { statusCode: res.statusCode, body };
      },
    };
  }

  #remember(table: Table): KubeObject[] {
    if (this.#columns === undefined && Array.isArray(table.columnDefinitions))
      this.#columns = table.columnDefinitions;
    const objects: KubeObject[] = [];
    for (const row of table.rows ?? []) {
      if (row.object === null || row.object === undefined) continue;
      objects.push(row.object);
      const key = rowKey(row.object);
      if (key === undefined || row.cells === undefined) continue;
      this.#cells.set(key, row.cells);
      if (this.#cells.size > MAX_PENDING_ROWS) {
        const oldest = this.#cells.keys().next().value;
        if (oldest !== undefined) this.#cells.delete(oldest);
      }
    }
    return objects;
  }

  /** A list page: one Table becomes one `List` of the rows' objects, with the Table's metadata. */
  async *#unwrapList(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    const pieces: Uint8Array[] = [];
    for await (const chunk of body) pieces.push(chunk);
    const bytes = Buffer.concat(pieces);
    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8(bytes));
    } catch {
      // Not ours to judge: the watcher's decoder reports a broken body with its position.
      yield bytes;
      return;
    }
    if (!isTable(parsed)) {
      yield bytes;
      return;
    }
    const items = this.#remember(parsed);
    yield encoder.encode(
      JSON.stringify({ kind: 'List', apiVersion: 'v1', metadata: parsed.metadata, items }),
    );
  }

  /** A watch stream: each event's Table becomes the object of its one row. */
  async *#unwrapWatch(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    const splitter = new LineSplitter();
    const unwrap = (bytes: Uint8Array): Uint8Array => {
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(utf8(bytes)) as typeof event;
      } catch {
        return bytes;
      }
      if (!isTable(event.object)) return bytes;
      const [object] = this.#remember(event.object);
      return encoder.encode(JSON.stringify({ type: event.type, object: object ?? null }));
    };
    for await (const chunk of body) {
      const lines = splitter.push(chunk);
      if (lines.length === 0) continue;
      // One chunk out per chunk in: the decoder downstream pays per chunk, not per byte.
      yield Buffer.concat(lines.flatMap((line) => [unwrap(line.bytes), NEWLINE]));
    }
    const rest = splitter.end();
    if (rest !== undefined) yield unwrap(rest.bytes);
  }
}

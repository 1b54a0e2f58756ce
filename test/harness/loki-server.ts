/**
 * Grafana Loki for the Loki sink's tests and benchmark: the binary `loki-binary.ts` builds, run as
 * one process (`-target=all`) on 127.0.0.1 with a minimal config: no authentication (a single
 * tenant), an in-memory ring, filesystem storage and its write-ahead log in a temporary directory
 * (kept across down/up, so a restarted Loki has what it had accepted). Old samples are accepted
 * and queries of any length always ask the ingester, so tests can push changes of any time and
 * read them straight back; query results are not cached. The tenant's ingestion rate limits are
 * lifted, so the benchmark measures the write path rather than a quota.
 *
 * A clean shutdown (down()) also flushes the ingester's chunks to the store, because replaying
 * the WAL alone loses acknowledged entries: Loki 3.7.8 writes a push's WAL records after releasing
 * the stream's lock, so two concurrent pushes to one stream (the sink has two in flight) can reach
 * the WAL in the other order than the per-stream counters they were given (a new stream's series
 * and its first entries are two records; the other push's entries can even fall between them).
 * Replay then drops the earlier entries as already seen (`loki_ingester_wal_duplicate_entries_total`)
 * or, before the series record, the later ones. Under heavy load a few entries in thousands went
 * missing after a restart (the end-to-end test twice lost its first). With the flush the store
 * holds them, and a query, which asks the store and the ingester and merges equal entries,
 * returns each once. A crash (no flush) can still lose them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { freePorts } from './ports.js';
import { LocalServer, serverDir, TestServer } from './local-server.js';
import { ensureLoki } from './loki-binary.js';

function config(dir: string, grpcPort: number): string {
  return `auth_enabled: false
server:
  http_listen_address: 127.0.0.1
  grpc_listen_address: 127.0.0.1
  grpc_listen_port: ${grpcPort}
  log_level: warn
common:
  instance_addr: 127.0.0.1
  path_prefix: ${dir}/data
  replication_factor: 1
  storage:
    filesystem:
      chunks_directory: ${dir}/data/chunks
      rules_directory: ${dir}/data/rules
  ring:
    kvstore:
      store: inmemory
ingester:
  lifecycler:
    min_ready_duration: 0s
    final_sleep: 0s
  wal:
    enabled: true
    dir: ${dir}/data/wal
    flush_on_shutdown: true
schema_config:
  configs:
    - from: 2020-01-01
      store: tsdb
      object_store: filesystem
      schema: v13
      index:
        prefix: index_
        period: 24h
limits_config:
  reject_old_samples: false
  max_query_length: 0
  split_queries_by_interval: 0
  discover_service_name: []
  discover_log_levels: false
  ingestion_rate_mb: 1024
  ingestion_burst_size_mb: 1024
  per_stream_rate_limit: 1GB
  per_stream_rate_limit_burst: 1GB
querier:
  query_ingesters_within: 0
query_range:
  cache_results: false
  parallelise_shardable_queries: false
analytics:
  reporting_enabled: false
`;
}

export interface LokiEntry {
  labels: Record<string, string>;
  /** Nanoseconds, as Loki returns them. */
  timestamp: string;
  line: string;
}

export class LokiServer extends TestServer {
  readonly #agent = new Agent({ connections: 4 });

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  static async start(): Promise<LokiServer> {
    const loki = await ensureLoki();
    const base = await serverDir('loki');
    const [grpcPort] = await freePorts(1);
    if (grpcPort === undefined) throw new Error('no free port');
    await writeFile(join(base, 'loki.yaml'), config(base, grpcPort));
    const server = await LocalServer.start(
      {
        name: 'loki',
        argv: (port) => [
          loki.path,
          `-config.file=${join(base, 'loki.yaml')}`,
          '-target=all',
          `-server.http-listen-port=${port}`,
        ],
        // The listener opens before the ingester has joined its ring and replayed its WAL.
        ready: async (port) => {
          const res = await request(`http://127.0.0.1:${port}/ready`);
          const body = await res.body.text();
          if (res.statusCode !== 200) throw new Error(`/ready answered ${res.statusCode}: ${body.trim()}`);
        },
      },
      base,
    );
    return new LokiServer(server);
  }

  /**
   * Every entry a LogQL stream selector matches, oldest first (2020 on, forward). Loki answers
   * at most `limit` entries; a test asks for fewer.
   */
  async entries(selector: string, limit = 5000): Promise<LokiEntry[]> {
    const query = new URLSearchParams({
      query: selector,
      start: String(BigInt(Date.parse('2020-01-01T00:00:00Z')) * 1_000_000n),
      end: String(BigInt(Date.now() + 3_600_000) * 1_000_000n),
      direction: 'forward',
      limit: String(limit),
    });
    const res = await this.#get(`/loki/api/v1/query_range?${query.toString()}`);
    if (res.status !== 200) throw new Error(`loki query ${selector}: ${res.status} ${res.body}`);
    const answer = JSON.parse(res.body) as {
      data: { result: { stream: Record<string, string>; values: [string, string][] }[] };
    };
    const out: LokiEntry[] = [];
    for (const { stream, values } of answer.data.result)
      for (const [timestamp, line] of values) out.push({ labels: stream, timestamp, line });
    // Streams come one after another; merge them by time (stable: a stream's own order stays).
    return out.sort((a, b) =>
      BigInt(a.timestamp) < BigInt(b.timestamp) ? -1 : BigInt(a.timestamp) > BigInt(b.timestamp) ? 1 : 0,
    );
  }

  /** How many entries `selector` matches with timestamps in (fromMs, toMs]. */
  async count(selector: string, fromMs: number, toMs: number): Promise<number> {
    const range = Math.max(1, Math.ceil((toMs - fromMs) / 1000));
    const query = new URLSearchParams({
      query: `sum(count_over_time(${selector}[${range}s]))`,
      time: String(BigInt(toMs) * 1_000_000n),
    });
    const res = await this.#get(`/loki/api/v1/query?${query.toString()}`);
    if (res.status !== 200) throw new Error(`loki count ${selector}: ${res.status} ${res.body}`);
    const answer = JSON.parse(res.body) as { data: { result: { value: [number, string] }[] } };
    return Number(answer.data.result[0]?.value[1] ?? 0);
  }

  async #get(path: string): Promise<{ status: number; body: string }> {
    const res = await request(`${this.url}${path}`, { dispatcher: this.#agent });
    return { status: res.statusCode, body: await res.body.text() };
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.#agent.close();
  }
}

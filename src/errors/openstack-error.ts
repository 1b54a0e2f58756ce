/**
 * Errors from OpenStack services. Every failure of a call to Keystone, Neutron or Octavia is an
 * {@link OpenStackError} naming the call (`POST /v2.0/ports`), the resource it was about (type and
 * name or id, when known), the HTTP status (absent when the network failed first) and the fault
 * the service reported in its body. Request bodies and headers never appear in an error: they may
 * carry credentials.
 *
 * What an error means (conflict, not found, immutable, over quota, unavailable) is decided in
 * `errors/classify.ts`, never at the call sites.
 */
import { RavenError } from './raven-error.js';

/** The OpenStack services this client talks to, by catalog service type. */
export type OpenStackService = 'identity' | 'network' | 'load-balancer';

/** The resource a call was about, for messages a user can act on. */
export interface ResourceRef {
  /** Singular resource type: `port`, `network`, `loadbalancer`, ... */
  type: string;
  id?: string;
  name?: string;
}

/** The fault a service put in an error body, normalised across the services' formats. */
export interface OpenStackFault {
  /** Neutron `NeutronError.type` (`IpAddressAlreadyAllocated`), Octavia `faultcode`, Keystone `title`. */
  type?: string;
  message?: string;
  /** Neutron `NeutronError.detail`, Octavia `debuginfo`, when not empty. */
  detail?: string;
}

export interface OpenStackErrorOptions {
  service: OpenStackService;
  /** `METHOD /path` without the query string. */
  call: string;
  resource?: ResourceRef;
  /** HTTP status; undefined when no answer arrived (refused, reset, timed out). */
  status?: number;
  fault?: OpenStackFault;
  /** The `x-openstack-request-id` (or `x-compute-request-id`) header, for the operator's logs. */
  requestId?: string;
  /** Seconds from a `Retry-After` header. */
  retryAfterSeconds?: number;
  cause?: unknown;
  /** Overrides the generated description (used by subclasses). */
  message?: string;
}

/**
 * One failed OpenStack call.
 *
 * @example
 * try { await neutron.ports.create({ network_id, name: 'web' }); }
 * catch (err) { if (isRavenError(err, 'ERR_OPENSTACK') && isConflict(err)) console.log(err.faultType); }
 */
export class OpenStackError extends RavenError {
  readonly service: OpenStackService;
  readonly call: string;
  readonly resource: ResourceRef | undefined;
  readonly status: number | undefined;
  readonly fault: OpenStackFault;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(options: OpenStackErrorOptions) {
    super('ERR_OPENSTACK', options.message ?? describe(options), { cause: options.cause });
    this.service = options.service;
    this.call = options.call;
    this.resource = options.resource;
    this.status = options.status;
    this.fault = options.fault ?? {};
    this.requestId = options.requestId;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The fault type reported by the service (`IpAddressAlreadyAllocated`, `Client`, ...). */
  get faultType(): string | undefined {
    return this.fault.type;
  }
}

/** What a load balancer reached instead of ACTIVE: ERROR, DELETED, or still pending at the deadline. */
export class OpenStackProvisioningError extends OpenStackError {
  /** The last `provisioning_status` seen. */
  readonly provisioningStatus: string;
  readonly operatingStatus: string | undefined;
  readonly timedOut: boolean;

  constructor(options: {
    call: string;
    resource: ResourceRef;
    provisioningStatus: string;
    operatingStatus?: string;
    timedOut: boolean;
    waitedMs: number;
  }) {
    const what = `${options.resource.type} ${options.resource.id ?? options.resource.name ?? ''}`.trim();
    const operating =
      options.operatingStatus === undefined ? '' : `, operating_status ${options.operatingStatus}`;
    const message = options.timedOut
      ? `${what} is still ${options.provisioningStatus}${operating} after ${options.waitedMs} ms waiting for ACTIVE`
      : `${what} went to provisioning_status ${options.provisioningStatus}${operating} instead of ACTIVE`;
    super({
      service: 'load-balancer',
      call: options.call,
      resource: options.resource,
      fault: { type: options.timedOut ? 'ProvisioningTimeout' : 'ProvisioningFailed', message },
      message,
    });
    this.provisioningStatus = options.provisioningStatus;
    this.operatingStatus = options.operatingStatus;
    this.timedOut = options.timedOut;
  }
}

function describe(options: OpenStackErrorOptions): string {
  const parts = [options.call];
  if (options.resource !== undefined) parts.push(`(${describeResource(options.resource)})`);
  let head = parts.join(' ');
  if (options.status !== undefined) head += `: ${options.status}`;
  const fault = options.fault ?? {};
  const type = fault.type === undefined ? '' : ` ${fault.type}`;
  const message = fault.message === undefined ? '' : `: ${fault.message}`;
  const detail = fault.detail === undefined ? '' : ` (${fault.detail})`;
  const request = options.requestId === undefined ? '' : ` [request ${options.requestId}]`;
  if (options.status === undefined) {
    const cause = options.cause instanceof Error ? `: ${options.cause.message}` : '';
    return `${head}: no answer${cause}`;
  }
  return `${head}${type}${message}${detail}${request}`;
}

/** `port "web-1"`, `port 5c1e...`, `port "web-1" 5c1e...`. */
export function describeResource(resource: ResourceRef): string {
  const name = resource.name === undefined || resource.name === '' ? '' : ` "${resource.name}"`;
  const id = resource.id === undefined ? '' : ` ${resource.id}`;
  return `${resource.type}${name}${id}`;
}

const MAX_TEXT = 500;

/**
 * The fault in an error body, whichever service wrote it:
 * Neutron `{"NeutronError": {"type", "message", "detail"}}`,
 * Octavia `{"faultcode", "faultstring", "debuginfo"}` or `{"description"}`,
 * Keystone `{"error": {"code", "title", "message"}}`; anything else becomes the trimmed text.
 */
export function parseFault(body: string): OpenStackFault {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    const text = body
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return text === '' ? {} : { message: text.slice(0, MAX_TEXT) };
  }
  if (!isRecord(parsed)) return {};
  const neutron = parsed.NeutronError;
  if (isRecord(neutron)) {
    return clean({ type: str(neutron.type), message: str(neutron.message), detail: str(neutron.detail) });
  }
  if (typeof neutron === 'string') return { message: neutron };
  if ('faultstring' in parsed || 'faultcode' in parsed) {
    return clean({
      type: str(parsed.faultcode),
      message: str(parsed.faultstring),
      detail: str(parsed.debuginfo),
    });
  }
  const keystone = parsed.error;
  if (isRecord(keystone)) return clean({ type: str(keystone.title), message: str(keystone.message) });
  if ('description' in parsed) return clean({ type: str(parsed.title), message: str(parsed.description) });
  if ('message' in parsed) return clean({ message: str(parsed.message) });
  return {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return text === '' ? undefined : text.slice(0, MAX_TEXT);
}

/** The fault without its undefined fields: absent, not present as undefined. */
function clean(fault: { [K in keyof OpenStackFault]: OpenStackFault[K] | undefined }): OpenStackFault {
  const out: OpenStackFault = {};
  if (fault.type !== undefined) out.type = fault.type;
  if (fault.message !== undefined) out.message = fault.message;
  if (fault.detail !== undefined) out.detail = fault.detail;
  return out;
}

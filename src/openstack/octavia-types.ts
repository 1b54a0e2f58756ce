/**
 * Octavia v2 resource shapes (`/v2/lbaas/...`), with the API's attribute names. Tags are accepted
 * in create and update bodies of load balancers, listeners, pools, members and health monitors
 * since API version 2.5; the lab runs 2.26.
 */

/** Where a resource is in its life: only ACTIVE accepts changes on the load balancer's tree. */
export type ProvisioningStatus =
  'ACTIVE' | 'DELETED' | 'ERROR' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE';

export type OperatingStatus = 'ONLINE' | 'DRAINING' | 'OFFLINE' | 'DEGRADED' | 'ERROR' | 'NO_MONITOR';

export interface OctaviaResource {
  id: string;
  name?: string;
  description?: string;
  project_id?: string;
  tags?: string[];
  admin_state_up?: boolean;
  provisioning_status?: ProvisioningStatus;
  operating_status?: OperatingStatus;
  created_at?: string;
  updated_at?: string | null;
}

export interface OctaviaCreate {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  /** Set by the client in noauth mode. */
  project_id?: string;
  tags?: readonly string[];
}

export interface LoadBalancer extends OctaviaResource {
  vip_address?: string;
  vip_port_id?: string;
  vip_subnet_id?: string;
  vip_network_id?: string;
  provider?: string;
  flavor_id?: string | null;
  listeners?: { id: string }[];
  pools?: { id: string }[];
}
export interface LoadBalancerCreate extends OctaviaCreate {
  /** A real Neutron port for the VIP: with only subnet and address some drivers invent a port. */
  vip_port_id?: string;
  vip_subnet_id?: string;
  vip_network_id?: string;
  vip_address?: string;
  provider?: string;
  flavor_id?: string;
}
export type LoadBalancerUpdate = Partial<
  Pick<OctaviaCreate, 'name' | 'description' | 'admin_state_up' | 'tags'>
>;

export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TCP' | 'UDP' | 'SCTP' | 'TERMINATED_HTTPS' | 'PROMETHEUS';

export interface Listener extends OctaviaResource {
  protocol: ListenerProtocol;
  protocol_port: number;
  default_pool_id?: string | null;
  connection_limit?: number;
  allowed_cidrs?: string[] | null;
  loadbalancers?: { id: string }[];
  timeout_client_data?: number;
  timeout_member_data?: number;
}
export interface ListenerCreate extends OctaviaCreate {
  loadbalancer_id: string;
  protocol: ListenerProtocol;
  protocol_port: number;
  default_pool_id?: string;
  connection_limit?: number;
  allowed_cidrs?: string[];
  timeout_client_data?: number;
  timeout_member_data?: number;
}
export type ListenerUpdate = Partial<
  Omit<ListenerCreate, 'loadbalancer_id' | 'protocol' | 'protocol_port' | 'project_id'>
>;

export type LbAlgorithm = 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';
export type PoolProtocol = 'HTTP' | 'HTTPS' | 'PROXY' | 'PROXYV2' | 'TCP' | 'UDP' | 'SCTP';

export interface SessionPersistence {
  type: 'SOURCE_IP' | 'HTTP_COOKIE' | 'APP_COOKIE';
  cookie_name?: string;
}

export interface Pool extends OctaviaResource {
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  session_persistence?: SessionPersistence | null;
  healthmonitor_id?: string | null;
  loadbalancers?: { id: string }[];
  listeners?: { id: string }[];
  members?: { id: string }[];
}
export interface PoolCreate extends OctaviaCreate {
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  /** One of `loadbalancer_id` or `listener_id` (the pool becomes the listener's default). */
  loadbalancer_id?: string;
  listener_id?: string;
  session_persistence?: SessionPersistence;
}
export type PoolUpdate = Partial<
  Pick<
    PoolCreate,
    'name' | 'description' | 'admin_state_up' | 'tags' | 'lb_algorithm' | 'session_persistence'
  >
>;

export interface Member extends OctaviaResource {
  address: string;
  protocol_port: number;
  subnet_id?: string | null;
  weight?: number;
  backup?: boolean;
  monitor_address?: string | null;
  monitor_port?: number | null;
}
export interface MemberCreate extends OctaviaCreate {
  address: string;
  protocol_port: number;
  subnet_id?: string;
  weight?: number;
  backup?: boolean;
  monitor_address?: string;
  monitor_port?: number;
}
export type MemberUpdate = Partial<
  Omit<MemberCreate, 'address' | 'protocol_port' | 'subnet_id' | 'project_id'>
>;

export type HealthMonitorType = 'HTTP' | 'HTTPS' | 'PING' | 'TCP' | 'TLS-HELLO' | 'UDP-CONNECT' | 'SCTP';

export interface HealthMonitor extends OctaviaResource {
  type: HealthMonitorType;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down?: number;
  pools?: { id: string }[];
  http_method?: string;
  url_path?: string;
  expected_codes?: string;
}
export interface HealthMonitorCreate extends OctaviaCreate {
  pool_id: string;
  type: HealthMonitorType;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down?: number;
  http_method?: string;
  url_path?: string;
  expected_codes?: string;
}
export type HealthMonitorUpdate = Partial<Omit<HealthMonitorCreate, 'pool_id' | 'type' | 'project_id'>>;

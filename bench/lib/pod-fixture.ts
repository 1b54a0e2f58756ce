/**
 * A realistic Pod as the apiserver serialises it: a Deployment's replica with labels, annotations,
 * an owner reference, managedFields from three managers, two containers with env, ports, probes,
 * resources and volume mounts, and a running status. One watch event line of it is about 7.6 KB,
 * of which managedFields is about a third, as on real clusters.
 */

/** The namespaces the pods are spread over, round-robin: a filter on the first keeps 1 in 10. */
export const NAMESPACES = Array.from({ length: 10 }, (_, i) => `team-${i}`);

const fieldsV1Metadata = {
  'f:metadata': {
    'f:generateName': {},
    'f:labels': {
      '.': {},
      'f:app.kubernetes.io/component': {},
      'f:app.kubernetes.io/instance': {},
      'f:app.kubernetes.io/name': {},
      'f:app.kubernetes.io/part-of': {},
      'f:app.kubernetes.io/version': {},
      'f:pod-template-hash': {},
    },
    'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/restartedAt': {}, 'f:prometheus.io/port': {} },
    'f:ownerReferences': { '.': {}, 'k:{"uid":"5d1c7a52-7c1e-4f0b-9d53-0e6f3b7c2a10"}': {} },
  },
};

const appContainerFields = {
  'k:{"name":"app"}': {
    '.': {},
    'f:env': {
      '.': {},
      'k:{"name":"LOG_LEVEL"}': { '.': {}, 'f:name': {}, 'f:value': {} },
      'k:{"name":"POD_NAME"}': { '.': {}, 'f:name': {}, 'f:valueFrom': { '.': {}, 'f:fieldRef': {} } },
      'k:{"name":"DATABASE_URL"}': {
        '.': {},
        'f:name': {},
        'f:valueFrom': { '.': {}, 'f:secretKeyRef': {} },
      },
    },
    'f:image': {},
    'f:imagePullPolicy': {},
    'f:livenessProbe': { '.': {}, 'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {}, 'f:scheme': {} } },
    'f:name': {},
    'f:ports': { '.': {}, 'k:{"containerPort":8080,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
    'f:readinessProbe': { '.': {}, 'f:httpGet': { '.': {}, 'f:path': {}, 'f:port': {} } },
    'f:resources': {
      '.': {},
      'f:limits': { '.': {}, 'f:memory': {} },
      'f:requests': { '.': {}, 'f:cpu': {} },
    },
    'f:volumeMounts': { '.': {}, 'k:{"mountPath":"/etc/app"}': { '.': {}, 'f:mountPath': {}, 'f:name': {} } },
  },
  'k:{"name":"metrics-sidecar"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {} },
};

function managedFields(time: string): unknown[] {
  return [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        ...fieldsV1Metadata,
        'f:spec': {
          'f:containers': appContainerFields,
          'f:dnsPolicy': {},
          'f:restartPolicy': {},
          'f:volumes': { '.': {}, 'k:{"name":"config"}': { '.': {}, 'f:configMap': {}, 'f:name': {} } },
        },
      },
    },
    {
      manager: 'kube-scheduler',
      operation: 'Update',
      apiVersion: 'v1',
      time,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:conditions': { '.': {}, 'k:{"type":"PodScheduled"}': {} } } },
      subresource: 'status',
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:status': {
          'f:conditions': {
            'k:{"type":"ContainersReady"}': {
              '.': {},
              'f:lastTransitionTime': {},
              'f:status': {},
              'f:type': {},
            },
            'k:{"type":"Initialized"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
            'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
          },
          'f:containerStatuses': {},
          'f:hostIP': {},
          'f:phase': {},
          'f:podIP': {},
          'f:podIPs': { '.': {}, 'k:{"ip":"10.244.1.23"}': { '.': {}, 'f:ip': {} } },
          'f:startTime': {},
        },
      },
      subresource: 'status',
    },
  ];
}

const sidecar = {
  name: 'metrics-sidecar',
  image: 'registry.example.com/observability/exporter:0.9.1',
  ports: [{ name: 'metrics', containerPort: 9090, protocol: 'TCP' }],
  resources: { limits: { memory: '64Mi' }, requests: { cpu: '10m', memory: '32Mi' } },
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  imagePullPolicy: 'IfNotPresent',
};

function appContainer(image: string, port: number): Record<string, unknown> {
  return {
    name: 'app',
    image,
    ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: [
      { name: 'LOG_LEVEL', value: 'info' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
      { name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: 'checkout-db', key: 'url' } } },
    ],
    resources: { limits: { memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
    volumeMounts: [
      { name: 'config', readOnly: true, mountPath: '/etc/app' },
      {
        name: 'kube-api-access-x7k2p',
        readOnly: true,
        mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
      },
    ],
    livenessProbe: {
      httpGet: { path: '/healthz', port, scheme: 'HTTP' },
      initialDelaySeconds: 10,
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: '/ready', port, scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 3,
    },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    imagePullPolicy: 'IfNotPresent',
  };
}

function containerStatus(name: string, image: string, i: number, time: string): Record<string, unknown> {
  return {
    name,
    state: { running: { startedAt: time } },
    lastState: {},
    ready: true,
    restartCount: 0,
    image,
    imageID: `${image.split(':')[0] ?? image}@sha256:${(i * 7919).toString(16).padStart(64, 'a')}`,
    containerID: `containerd://${(i * 104729).toString(16).padStart(64, '0')}`,
    started: true,
  };
}

/**
 * Pod number `i`: a distinct name and uid; namespace `NAMESPACES[i % 10]`; resourceVersion
 * `1000 + i` unless given (a later version of the same pod).
 */
export function makePod(i: number, resourceVersion = String(1000 + i)): Record<string, unknown> {
  const namespace = NAMESPACES[i % NAMESPACES.length] ?? 'default';
  const hash = (i * 2654435761).toString(36).slice(-5).padStart(5, 'x');
  const time = '2026-03-14T09:26:53Z';
  const uid = `${(i + 0x10000000).toString(16)}-3c4d-4e5f-8a9b-${i.toString(16).padStart(12, '0')}`;
  const app = 'checkout-api-5d8f7c9b4d';
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name: `${app}-${hash}-${i}`,
      generateName: `${app}-`,
      namespace,
      uid,
      resourceVersion,
      creationTimestamp: time,
      labels: {
        'app.kubernetes.io/name': 'checkout-api',
        'app.kubernetes.io/instance': 'checkout-api-prod',
        'app.kubernetes.io/component': 'backend',
        'app.kubernetes.io/part-of': 'shop',
        'app.kubernetes.io/version': '2.14.3',
        'pod-template-hash': '5d8f7c9b4d',
      },
      annotations: {
        'checksum/config': '9f2c4be1d7a3056e8b1f42c9d0a7e6b35c8d1f0e2a4b6c8d0e1f3a5b7c9d1e2f',
        'checksum/secret': '3a7d5c9e1b2f4a6c8e0d2b4f6a8c0e1d3f5b7a9c1e3d5f7b9a1c3e5d7f9b1a3c',
        'kubectl.kubernetes.io/restartedAt': '2026-03-14T09:20:11Z',
        'prometheus.io/port': '9090',
        'prometheus.io/scrape': 'true',
      },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: app,
          uid: '5d1c7a52-7c1e-4f0b-9d53-0e6f3b7c2a10',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: managedFields(time),
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: 'checkout-api-config', defaultMode: 420 } },
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
              { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
              {
                downwardAPI: {
                  items: [
                    { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                  ],
                },
              },
            ],
            defaultMode: 420,
          },
        },
      ],
      containers: [appContainer('registry.example.com/shop/checkout-api:2.14.3', 8080), sidecar],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'checkout-api',
      serviceAccount: 'checkout-api',
      nodeName: `worker-${i % 40}`,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001 },
      schedulerName: 'default-scheduler',
      tolerations: [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      priority: 0,
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
    },
    status: {
      phase: 'Running',
      conditions: [
        'PodReadyToStartContainers',
        'Initialized',
        'Ready',
        'ContainersReady',
        'PodScheduled',
      ].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: time })),
      hostIP: `10.0.${(i >> 8) & 255}.${i & 255}`,
      hostIPs: [{ ip: `10.0.${(i >> 8) & 255}.${i & 255}` }],
      podIP: `10.244.${(i >> 8) & 255}.${i & 255}`,
      podIPs: [{ ip: `10.244.${(i >> 8) & 255}.${i & 255}` }],
      startTime: time,
      containerStatuses: [
        containerStatus('app', 'registry.example.com/shop/checkout-api:2.14.3', i, time),
        containerStatus('metrics-sidecar', 'registry.example.com/observability/exporter:0.9.1', i, time),
      ],
      qosClass: 'Burstable',
    },
  };
}

/** One watch event line (with its newline) for pod `i`, at `resourceVersion` when given. */
export function podEventLine(i: number, type = 'ADDED', resourceVersion?: string): string {
  return `${JSON.stringify({ type, object: makePod(i, resourceVersion) })}\n`;
}

/**
 * Configuration of the OpenStack client, validated as a whole: every problem is reported at once,
 * each naming its field (`auth.projectDomainName`), and no message ever echoes a value (passwords
 * and application credential secrets live here).
 *
 * Three ways to authenticate:
 * - `password`: Keystone v3 password auth of a user (by id, or name + domain), scoped to a project
 *   (by id, or name + domain) or a domain;
 * - `applicationCredential`: Keystone v3 application credential (id + secret), scoped by itself;
 * - `noauth`: no Keystone (services started with `auth_strategy = noauth`); endpoints are given in
 *   `endpoints` and `projectId` is put into every create body.
 */
import * as z from 'zod';
import { ConfigError } from '../errors/raven-error.js';
import { ConfigAggregateError } from '../errors/config-aggregate-error.js';
import { formatConfigPath, type ConfigPath } from '../errors/config-path.js';

const nonEmpty = z.string().trim().min(1, 'expected a non-empty string');
const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' });

const passwordAuth = z
  .strictObject({
    type: z.literal('password'),
    authUrl: httpUrl,
    userId: nonEmpty.optional(),
    username: nonEmpty.optional(),
    userDomainId: nonEmpty.optional(),
    userDomainName: nonEmpty.optional(),
    password: z.string().min(1, 'expected a non-empty password'),
    projectId: nonEmpty.optional(),
    projectName: nonEmpty.optional(),
    projectDomainId: nonEmpty.optional(),
    projectDomainName: nonEmpty.optional(),
    domainId: nonEmpty.optional(),
    domainName: nonEmpty.optional(),
  })
  .superRefine((auth, ctx) => {
    const issue = (path: string, message: string): void => {
      ctx.addIssue({ code: 'custom', path: [path], message });
    };
    if ((auth.userId === undefined) === (auth.username === undefined))
      issue('username', 'give exactly one of username (with userDomainName or userDomainId) or userId');
    if (auth.username !== undefined && auth.userDomainId === undefined && auth.userDomainName === undefined)
      issue('userDomainName', 'a username needs its domain: give userDomainName or userDomainId');
    const scopes = [auth.projectId, auth.projectName, auth.domainId, auth.domainName].filter(
      (v) => v !== undefined,
    );
    if (scopes.length !== 1)
      issue('projectId', 'give exactly one scope: projectId, projectName, domainId or domainName');
    if (
      auth.projectName !== undefined &&
      auth.projectDomainId === undefined &&
      auth.projectDomainName === undefined
    )
      issue('projectDomainName', 'a projectName needs its domain: give projectDomainName or projectDomainId');
  });

const applicationCredentialAuth = z.strictObject({
  type: z.literal('applicationCredential'),
  authUrl: httpUrl,
  applicationCredentialId: nonEmpty,
  applicationCredentialSecret: z.string().min(1, 'expected a non-empty secret'),
});

const noAuth = z.strictObject({
  type: z.literal('noauth'),
  projectId: nonEmpty,
});

const retrySchema = z.strictObject({
  /** Attempts in all, including the first; 1 disables retries. */
  maxAttempts: z.int().min(1).max(10).default(4),
  baseDelayMs: z.int().min(1).max(60_000).default(250),
  maxDelayMs: z.int().min(1).max(300_000).default(4_000),
});

export const openStackConfigSchema = z
  .strictObject({
    auth: z.discriminatedUnion('type', [passwordAuth, applicationCredentialAuth, noAuth], {
      error: "expected auth.type to be 'password', 'applicationCredential' or 'noauth'",
    }),
    /** Catalog region; when absent the first endpoint of the interface is used. */
    region: nonEmpty.optional(),
    interface: z.enum(['public', 'internal', 'admin']).default('public'),
    /** Endpoints that override the catalog; required in noauth mode. */
    endpoints: z.strictObject({ network: httpUrl.optional(), loadBalancer: httpUrl.optional() }).default({}),
    /** Time allowed for a response's headers, and between body chunks. */
    timeoutMs: z.int().min(1).max(600_000).default(30_000),
    retry: retrySchema.default({ maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 4_000 }),
    /**
     * Re-authenticate this long before the token's expires_at, so no request carries a token that
     * expires in flight. Bounded to half the token's lifetime for short-lived tokens.
     */
    tokenRefreshMarginMs: z.int().min(0).default(60_000),
    /**
     * Send port tags in the create body (needs Neutron's `tag_ports_during_bulk_creation` extension
     * driver); when false, ports are tagged with a PUT after create like other resources.
     */
    tagPortsOnCreate: z.boolean().default(true),
    userAgent: nonEmpty.default('kube-raven-openstack/0.1.0'),
  })
  .superRefine((config, ctx) => {
    if (config.auth.type === 'noauth' && config.endpoints.network === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['endpoints', 'network'],
        message: 'noauth has no service catalog: give the Neutron URL in endpoints.network',
      });
  });

/** What a caller writes. */
export type OpenStackConfigInput = z.input<typeof openStackConfigSchema>;
/** The validated configuration, defaults applied. */
export type OpenStackConfig = z.output<typeof openStackConfigSchema>;
export type OpenStackAuthConfig = OpenStackConfig['auth'];
export type RetryConfig = OpenStackConfig['retry'];

/**
 * Validate `input`; throw a {@link ConfigError} (a {@link ConfigAggregateError} for several
 * problems) naming each bad field under `path` (the place of this block in a larger file).
 *
 * @example
 * const config = parseOpenStackConfig({ auth: { type: 'noauth', projectId: 'p1' },
 *   endpoints: { network: 'http://127.0.0.1:9696', loadBalancer: 'http://127.0.0.1:9876' } });
 */
export function parseOpenStackConfig(input: unknown, options: { path?: ConfigPath } = {}): OpenStackConfig {
  const result = openStackConfigSchema.safeParse(input);
  if (result.success) return result.data;
  const prefix = options.path ?? [];
  const errors = result.error.issues.map(
    (issue) =>
      new ConfigError(issue.message, {
        path: formatConfigPath([...prefix, ...issue.path]),
      }),
  );
  if (errors.length === 1 && errors[0] !== undefined) throw errors[0];
  throw new ConfigAggregateError(errors);
}

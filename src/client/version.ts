/**
 * The package version, read from package.json (two levels up from both `src/client` and
 * `dist/client`), for the default User-Agent.
 */
import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The kube-raven version, e.g. `0.1.0`. */
export const version: string = pkg.version;

/** The default User-Agent: `kube-raven/<version>`. */
export const defaultUserAgent = `kube-raven/${version}`;

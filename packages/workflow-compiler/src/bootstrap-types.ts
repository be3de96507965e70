import type { JsonObject } from './json-value.js';
import type { StringBoolean } from './types.js';

/** A key record (docs/interfaces.md §2). `keyHex` may be secret: never log it. */
export interface BootstrapKey {
  id: string;
  purpose: 'sign' | 'authenticated' | 'anonymous' | 'symmetric';
  type: 'public' | 'secret';
  keyHex: string;
  metadata?: JsonObject;
}

/** A signer reference, normalised to object form. */
export interface BootstrapSigner {
  id: string;
  description?: string;
}

/** Deploy-time package verification policy (docs/interfaces.md §3.2). */
export interface BootstrapPackaging {
  packageId: string;
  packagerIdentities?: string[];
  requiredSigners?: BootstrapSigner[];
  additionalSigners?: BootstrapSigner[];
  requiredAdditionalSignerCount?: number;
  /** The lowest release sequence accepted, also without a data directory (issue 29 §1). */
  minimumSequence?: number;
  /** A release sequence accepted although older than the newest the agent remembers (a deliberate downgrade). */
  allowDowngradeTo?: number;
  /** Seconds a package is still accepted past its `expiresAt`, 0 … 86400 (the agent's default: 300). */
  clockSkewSeconds?: number;
}

/** An outbound host in array form (docs/interfaces.md §3.3); the legacy `hosts` map is converted to this. */
export interface BootstrapHost {
  id: string;
  host?: string;
  transport?: 'http' | 'inProc';
  inProcServerId?: string;
  inProcDeploymentId?: string;
  headers?: Record<string, string>;
  allowList?: { method: string; uriPattern: string }[];
  authenticationHost?: StringBoolean;
  data?: JsonObject;
  httpTimeout?: number;
}

/** A listener permitter (docs/interfaces.md §3.4); `servePackagedAsset` is normalised to `serveFromPackagedAsset`. */
export interface BootstrapServer {
  id: string;
  port?: number;
  bindAddress?: string;
  tcp?: StringBoolean;
  inProcOnly?: StringBoolean;
  serveFromPackagedAsset?: { packagedAssetFileId: string };
}

/** A file permitter (docs/interfaces.md §3.4). */
export interface BootstrapFileAccess {
  id: string;
  directoryOrFile: string;
  patterns?: string[];
  READ?: StringBoolean;
  LIST?: StringBoolean;
  WRITE?: StringBoolean;
  DELETE?: StringBoolean;
  required?: StringBoolean;
}

/** One deployment record, normalised (docs/interfaces.md §3.1). Fields not modelled here stay as JSON. */
export interface DeploymentRecord {
  deploymentId: string;
  remoteConfiguration: string;
  enabled?: StringBoolean;
  agentPrivateKey?: string;
  persistenceRoot?: string;
  packaging?: BootstrapPackaging;
  keys?: BootstrapKey[];
  allowExternalHostAccess?: BootstrapHost[];
  allowHttpServerAccess?: BootstrapServer[];
  allowFileAccess?: BootstrapFileAccess[];
  allowDeploymentAccess?: JsonObject[];
  data?: JsonObject;
  workflow?: JsonObject;
  errorHandling?: JsonObject;
  /**
   * Switches back to the reference agent's behaviour where this project deliberately differs (SPEC.md §8.3):
   * `httpRequestEnvelope` hands an HTTP-triggered step the `{uri, method, path, query, body}` envelope as its body.
   */
  referenceBehaviour?: { httpRequestEnvelope?: StringBoolean };
  /**
   * Time limit of one processor run of this deployment, ms (1 … 600 000, `MAX_SCRIPT_TIMEOUT_MS`); wins over the
   * agent's default (`AGENT_SCRIPT_TIME_MS`, else 5 000). SPEC.md §8.4.
   */
  scriptTimeoutMs?: number;
  /**
   * Grants the deployment the agent's packager capability (SPEC.md §8.5): steps that declare
   * `data.packagerOperation` serve that packager operation, `context.packager()` runs it. On only when `true` or
   * `"true"`; then `data.resourceIds` (at least one) and `data.workflowSourceIds` name `allowFileAccess` entries
   * that grant `READ` and `LIST`.
   */
  allowPackagerAccess?: StringBoolean;
  [other: string]: unknown;
}

/** A normalised bootstrap: always an array of at least one record. */
export type Bootstrap = DeploymentRecord[];

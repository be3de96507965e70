import type { DeploymentRecord } from '@org/workflow-compiler';
import { openAssetArchive, type AssetArchive } from './archive.js';
import { openAssetFile } from './asset-file.js';
import { DEFAULT_ASSET_LIMITS } from './zip-checks.js';

const listens = (server: { inProcOnly?: unknown }) =>
  server.inProcOnly !== true && server.inProcOnly !== 'true';

/** Ids of the record's servers that serve a packaged asset (their `httpFile` steps are routable). */
export function assetServerIds(record: DeploymentRecord): Set<string> {
  const servers = record.allowHttpServerAccess ?? [];
  return new Set(servers.filter((s) => s.serveFromPackagedAsset !== undefined).map((s) => s.id));
}

/**
 * Opens and validates the packaged asset zip of every listening server of one record that declares
 * `serveFromPackagedAsset`, once, at start-up. On the first failure the archives opened so far are closed.
 * @throws `AGENT_ASSET_UNREADABLE`, `AGENT_ASSET_INVALID` (AgentError) naming deployment, server and file.
 */
export async function openServerArchives(
  record: DeploymentRecord,
  baseDir: string,
): Promise<Map<string, AssetArchive>> {
  const out = new Map<string, AssetArchive>();
  try {
    for (const server of record.allowHttpServerAccess ?? []) {
      const asset = server.serveFromPackagedAsset;
      if (asset === undefined || !listens(server)) continue;
      const file = await openAssetFile(record, server.id, asset.packagedAssetFileId, baseDir);
      const label = `deployment "${record.deploymentId}", server "${server.id}", zip ${JSON.stringify(file.path)}`;
      out.set(server.id, await openAssetArchive(file.handle, file.size, DEFAULT_ASSET_LIMITS, label));
    }
  } catch (err) {
    await closeArchives(out.values());
    throw err;
  }
  return out;
}

/** Closes archives (their file handles). */
export async function closeArchives(archives: Iterable<AssetArchive>): Promise<void> {
  await Promise.all([...archives].map((a) => a.close()));
}

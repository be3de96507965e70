import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';

/** Writes a zip of `files` (name → content), deflated unless `store`, with yazl; resolves with its path. */
export async function writeAssetZip(
  path: string,
  files: Readonly<Record<string, string | Uint8Array>>,
  store = false,
): Promise<string> {
  const zip = new ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.from(content), name, { compress: !store, mtime: new Date(2026, 0, 1) });
  }
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(path));
  return path;
}

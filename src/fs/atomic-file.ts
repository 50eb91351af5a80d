import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Replaces a file atomically: write a temporary file, fsync it, rename it over the old
 * one, fsync the folder. A crash leaves either the old or the new content, never half.
 */
export async function writeFileAtomically(path: string, text: string, mode = 0o666): Promise<void> {
  const temp = `${path}.tmp`;
  const file = await open(temp, 'w', mode);
  try {
    await file.writeFile(text, 'utf8');
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

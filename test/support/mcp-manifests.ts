import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO } from './arbiter-process.js';

/**
 * The example's MCP manifests (capabilities, agent-001's grant, the notes-guard policy)
 * again for another server name, written into `dir`: for a second upstream of the notes tools.
 */
export async function writeNotesManifestsFor(server: string, dir: string): Promise<void> {
  const from = join(REPO, 'examples/mcp/manifests');
  for (const file of await readdir(from)) {
    const text = (await readFile(join(from, file), 'utf8'))
      .replaceAll('mcp.notes.', `mcp.${server}.`)
      .replaceAll('mcp-notes-', `mcp-${server}-`)
      .replaceAll('  server: notes\n', `  server: ${server}\n`)
      .replaceAll('agent-001-notes', `agent-001-${server}`)
      .replaceAll('notes-guard', `${server}-guard`);
    await writeFile(join(dir, `${server}-${file}`), text);
  }
}

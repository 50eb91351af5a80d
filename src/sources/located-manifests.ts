import { readFile, stat } from 'node:fs/promises';
import { LineCounter, type Document } from 'yaml';
import { API_GROUP } from '../model/index.js';
import { listManifestFiles } from './manifest-folder.js';
import { yamlDocuments } from './yaml-documents.js';

/** One Arbiter object of a manifest file, with where it stands. */
export interface LocatedObject {
  /** The path as named (a given file, or a file below a given folder). */
  file: string;
  /** 1-based line where the object's document starts. */
  line: number;
  raw: unknown;
  /** The line of a field (`spec.rules[2].condition`), or of its nearest ancestor present. */
  lineOf(field: string | undefined): number;
}

export interface FileProblem {
  file: string;
  line: number;
  message: string;
}

/**
 * Reads manifests from files and folders (every *.yaml / *.yml below a folder), keeping
 * each object's position so that tools can say FILE:LINE. Objects of other API groups are
 * skipped, as the server skips them; a YAML error is a problem of its document.
 */
export async function readLocatedManifests(
  paths: readonly string[],
): Promise<{ objects: LocatedObject[]; problems: FileProblem[] }> {
  const objects: LocatedObject[] = [];
  const problems: FileProblem[] = [];
  for (const file of await expand(paths)) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      problems.push({ file, line: 1, message: `cannot read: ${(err as Error).message}` });
      continue;
    }
    const lines = new LineCounter();
    for (const { document, error, errorLine } of yamlDocuments(text, lines)) {
      if (error !== undefined) {
        problems.push({ file, line: errorLine ?? lineAt(lines, document.range[0]), message: error });
        continue;
      }
      const raw: unknown = document.toJS({ maxAliasCount: 100 });
      if (raw === null || raw === undefined || isOtherGroup(raw)) continue;
      objects.push({
        file,
        line: lineAt(lines, document.contents?.range[0] ?? 0),
        raw,
        lineOf: (field) => fieldLine(document, lines, field),
      });
    }
  }
  return { objects, problems };
}

/** Files as given; folders as the manifest files below them. Throws for a path that is not there. */
async function expand(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const info = await stat(path);
    files.push(...(info.isDirectory() ? await listManifestFiles(path) : [path]));
  }
  return files;
}

function isOtherGroup(raw: unknown): boolean {
  const apiVersion = (raw as { apiVersion?: unknown }).apiVersion;
  return typeof apiVersion === 'string' && !apiVersion.startsWith(`${API_GROUP}/`);
}

function lineAt(lines: LineCounter, offset: number): number {
  return lines.linePos(offset).line;
}

/** `spec.rules[2].condition` -> ['spec', 'rules', 2, 'condition']. */
function pathOf(field: string): Array<string | number> {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

function fieldLine(document: Document.Parsed, lines: LineCounter, field: string | undefined): number {
  const path = field === undefined ? [] : pathOf(field);
  for (let length = path.length; length > 0; length--) {
    const node = document.getIn(path.slice(0, length), true) as
      { range?: [number, number, number] } | undefined;
    if (node?.range) return lineAt(lines, node.range[0]);
  }
  return lineAt(lines, document.contents?.range[0] ?? 0);
}

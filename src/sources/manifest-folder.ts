import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { validateConfigObject } from '../index/index.js';
import { API_GROUP, objectKey, type ConfigObject } from '../model/index.js';
import { yamlDocuments } from './yaml-documents.js';

export interface ManifestProblem {
  file: string;
  message: string;
}

export interface ManifestFile {
  file: string;
  objects: ConfigObject[];
}

const MANIFEST_FILE = /\.ya?ml$/i;

/** Every *.yaml / *.yml below dir, sorted so that loading is deterministic. */
export async function listManifestFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && MANIFEST_FILE.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/**
 * Parses one manifest file. Objects of other API groups (a Deployment in the same folder)
 * are skipped; any error makes the whole file invalid, so a half-edited file never
 * half-applies.
 */
export async function readManifestFile(path: string, root: string): Promise<ManifestFile | ManifestProblem> {
  const file = relative(root, path) || path;
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    return { file, message: `cannot read: ${(err as Error).message}` };
  }
  const objects: ConfigObject[] = [];
  let index = 0;
  for (const { document, error } of yamlDocuments(text)) {
    const where = `${file} (document ${++index})`;
    if (error !== undefined) return { file, message: `${where}: ${error}` };
    const raw: unknown = document.toJS({ maxAliasCount: 100 });
    if (raw === null || raw === undefined) continue;
    const apiVersion = (raw as { apiVersion?: unknown }).apiVersion;
    if (typeof apiVersion === 'string' && !apiVersion.startsWith(`${API_GROUP}/`)) continue;
    const checked = validateConfigObject(raw);
    if (!checked.ok) return { file, message: `${where}: ${checked.errors.join('; ')}` };
    objects.push(checked.object);
  }
  return { file, objects };
}

export function isProblem(result: ManifestFile | ManifestProblem): result is ManifestProblem {
  return 'message' in result;
}

/**
 * Merges files into one object list. The first file (in path order) to define a
 * kind/name keeps it; a later duplicate is a problem of the later file.
 */
export function mergeManifestFiles(files: readonly ManifestFile[]): {
  objects: ConfigObject[];
  problems: ManifestProblem[];
  fileOf: Map<string, string>;
} {
  const fileOf = new Map<string, string>();
  const objects: ConfigObject[] = [];
  const problems: ManifestProblem[] = [];
  for (const { file, objects: inFile } of files) {
    for (const object of inFile) {
      const key = objectKey(object);
      const owner = fileOf.get(key);
      if (owner !== undefined) {
        problems.push({ file, message: `${key} is already defined in ${owner}; ignored here` });
        continue;
      }
      fileOf.set(key, file);
      objects.push(object);
    }
  }
  return { objects, problems, fileOf };
}

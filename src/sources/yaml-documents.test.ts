import { describe, expect, it } from 'vitest';
import { yamlDocuments } from './yaml-documents.js';

describe('yamlDocuments', () => {
  it('hands out each document of a stream in order', () => {
    const docs = [...yamlDocuments('a: 1\n---\nb: [2, 3]\n---\n')];
    expect(docs.map((d) => d.document.toJS())).toEqual([{ a: 1 }, { b: [2, 3] }, null]);
    expect(docs.every((d) => d.error === undefined)).toBe(true);
  });

  it('names the line and column of the first error of a document', () => {
    const docs = [...yamlDocuments('a: 1\n---\nb: 1\nb: 2\n')];
    expect(docs[0]?.error).toBeUndefined();
    expect(docs[1]?.error).toMatch(/unique.*\(line 4, column 1\)$/i);
  });
});

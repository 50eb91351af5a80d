import { Composer, LineCounter, Parser, type Document } from 'yaml';

export interface YamlDocument {
  document: Document.Parsed;
  /** The document's first error, with its line and column; undefined when it parsed. */
  error: string | undefined;
  /** The 1-based line of that error. */
  errorLine?: number;
}

/**
 * The documents of a multi-document YAML text one at a time. Unlike parseAllDocuments,
 * the syntax trees of documents already handed out can be collected: a file of 10,000
 * objects no longer holds all of them at once (hundreds of MiB at start). `lines` fills
 * with the text's line starts, for callers that report positions.
 */
export function* yamlDocuments(text: string, lines = new LineCounter()): Generator<YamlDocument> {
  const composer = new Composer({ uniqueKeys: true });
  for (const document of composer.compose(new Parser(lines.addNewLine).parse(text))) {
    const first = document.errors[0];
    if (first === undefined) {
      yield { document, error: undefined };
      continue;
    }
    const { line, col } = lines.linePos(first.pos[0]);
    yield {
      document,
      error: `${first.message.split('\n')[0]} (line ${line}, column ${col})`,
      errorLine: line,
    };
  }
}

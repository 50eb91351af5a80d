import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { junitReport } from './junit-report.js';

describe('junitReport', () => {
  it('stays well-formed whatever the names and messages hold, and keeps their text', () => {
    const hostile = `<tag attr="x"> & 'quote' ]]> \u0000\u0007 end`;
    const xml = junitReport([
      {
        name: hostile,
        file: 'a&b.test.yaml',
        cases: [
          { name: hostile, failures: [`expected outcome "DENY", got ${hostile}`, 'second'] },
          { name: 'fine', failures: [] },
        ],
      },
    ]);
    expect(XMLValidator.validate(xml)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);
    const cleaned = hostile.replace('\u0000', '').replace('\u0007', '');
    expect(parsed.testsuites.testsuite.name).toBe(cleaned);
    expect(parsed.testsuites.testsuite.file).toBe('a&b.test.yaml');
    const [failed, passed] = parsed.testsuites.testsuite.testcase;
    expect(failed.name).toBe(cleaned);
    expect(failed.failure.message).toBe(`expected outcome "DENY", got ${cleaned}`);
    expect(failed.failure['#text']).toContain('second');
    expect(passed.failure).toBeUndefined();
    expect(parsed.testsuites).toMatchObject({ tests: '2', failures: '1' });
  });
});

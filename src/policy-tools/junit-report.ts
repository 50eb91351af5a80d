export interface JunitSuite {
  name: string;
  file: string;
  cases: Array<{ name: string; failures: string[] }>;
}

/** JUnit XML (the dialect CI systems read): one <testsuite> per suite, a <failure> per failed case. */
export function junitReport(suites: readonly JunitSuite[]): string {
  const total = suites.reduce((n, s) => n + s.cases.length, 0);
  const failed = suites.reduce((n, s) => n + s.cases.filter((c) => c.failures.length > 0).length, 0);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="arbiter test" tests="${total}" failures="${failed}" errors="0">`,
  ];
  for (const suite of suites) {
    const suiteFailures = suite.cases.filter((c) => c.failures.length > 0).length;
    lines.push(
      `  <testsuite name="${xml(suite.name)}" file="${xml(suite.file)}" tests="${suite.cases.length}" failures="${suiteFailures}" errors="0">`,
    );
    for (const testCase of suite.cases) {
      const open = `    <testcase classname="${xml(suite.name)}" name="${xml(testCase.name)}"`;
      if (testCase.failures.length === 0) {
        lines.push(`${open}/>`);
        continue;
      }
      lines.push(
        `${open}>`,
        `      <failure message="${xml(testCase.failures[0]!)}">${xml(testCase.failures.join('\n'))}</failure>`,
        '    </testcase>',
      );
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}

/** Text and attribute values; characters XML 1.0 cannot hold at all are dropped. */
function xml(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&apos;');
}

import { errorText } from '../model/error-text.js';
import { formatFinding, manifestFindings, type Finding } from '../policy-tools/manifest-findings.js';
import { readLocatedManifests } from '../sources/located-manifests.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';

const HELP = `Usage: arbiter validate PATH... [-o text|json|github] [--strict]

Checks Capability, Policy and ActorGrant manifests (files, or folders of *.yaml) as the
server and the admission webhook do: schema, CEL conditions, parameter schemas, time
zones, duplicate names, identities bound to two actors. Warns about what is legal but
likely wrong: a capability no file defines, a rule that can never decide, two rules
without conditions at equal priority with different outcomes.

Each problem is printed as FILE:LINE: Kind/name: message.
  -o text     the default
  -o json     {"valid", "errors": [...], "warnings": [...]} for machines
  -o github   GitHub Actions annotations (::error file=...,line=...::...)
  --strict    warnings count as errors
Exit status: 0 valid, 1 invalid, 2 usage error.
`;

const FORMATS = ['text', 'json', 'github'] as const;
type Format = (typeof FORMATS)[number];

interface ValidateOptions {
  paths: string[];
  format: Format;
  strict: boolean;
}

export function runValidate(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), validate);
}

function parseOptions(argv: string[]): ValidateOptions | 'help' {
  const { values, positionals } = parseCommandLine(argv, {
    output: { type: 'string', short: 'o', default: 'text' },
    strict: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  const format = values.output as Format;
  if (!FORMATS.includes(format))
    throw new UsageError(`-o must be one of ${FORMATS.join(', ')}, not ${values.output}`);
  if (positionals.length === 0) throw new UsageError('name at least one file or folder of manifests');
  return { paths: positionals, format, strict: values.strict };
}

async function validate({ paths, format, strict }: ValidateOptions): Promise<number> {
  let read;
  try {
    read = await readLocatedManifests(paths);
  } catch (err) {
    // A path that is not there: the command line names it.
    throw new UsageError(errorText(err));
  }
  const findings = manifestFindings(read.objects, read.problems).map((f) =>
    strict && f.severity === 'warning' ? { ...f, severity: 'error' as const } : f,
  );
  const errors = findings.filter((f) => f.severity === 'error');
  process.stdout.write(render(format, findings, read.objects.length));
  process.stderr.write(
    `${read.objects.length} object(s): ${errors.length} error(s), ${findings.length - errors.length} warning(s)\n`,
  );
  return errors.length > 0 ? 1 : 0;
}

function render(format: Format, findings: readonly Finding[], objects: number): string {
  switch (format) {
    case 'json': {
      const view = (f: Finding) => ({
        file: f.file,
        line: f.line,
        object: f.object ?? null,
        message: f.message,
      });
      const errors = findings.filter((f) => f.severity === 'error').map(view);
      const warnings = findings.filter((f) => f.severity === 'warning').map(view);
      return `${JSON.stringify({ valid: errors.length === 0, objects, errors, warnings }, null, 2)}\n`;
    }
    case 'github':
      return findings.map(githubAnnotation).join('');
    case 'text':
      return findings.map((f) => `${formatFinding(f)}\n`).join('');
  }
}

/** ::error file=F,line=L,title=T::message, escaped as the Actions toolkit escapes them. */
function githubAnnotation(finding: Finding): string {
  const property = (value: string) =>
    value
      .replaceAll('%', '%25')
      .replaceAll('\r', '%0D')
      .replaceAll('\n', '%0A')
      .replaceAll(':', '%3A')
      .replaceAll(',', '%2C');
  const data = (value: string) =>
    value.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
  const title = finding.object ? `,title=${property(finding.object)}` : '';
  return `::${finding.severity} file=${property(finding.file)},line=${finding.line}${title}::${data(finding.message)}\n`;
}

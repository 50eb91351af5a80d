import { describe, expect, it } from 'vitest';
import { parseInvocation, type CommandShape } from './arguments.js';
import { UsageError } from './plugin-error.js';

const COMMANDS: CommandShape[] = [
  { words: ['pending'], takesDecisionId: false, ownFlags: ['namespace', 'all-namespaces'] },
  { words: ['approve'], takesDecisionId: true, ownFlags: ['comment'] },
  { words: ['audit', 'tail'], takesDecisionId: false, ownFlags: ['event-type'] },
];
const parse = (...argv: string[]) => parseInvocation(argv, COMMANDS);
const usageError = (...argv: string[]) => {
  try {
    parse(...argv);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`${argv.join(' ')} parsed`);
};

describe('parseInvocation', () => {
  it('takes flags anywhere, in both spellings', () => {
    expect(
      parse(
        '--arbiter-namespace',
        'gov',
        'approve',
        'd-1',
        '--comment=ok',
        '--server',
        'http://h:8080/',
        '-o',
        'json',
      ),
    ).toEqual({
      command: COMMANDS[1],
      decisionId: 'd-1',
      comment: 'ok',
      output: 'json',
      records: { all: false },
      connection: { arbiterNamespace: 'gov', server: new URL('http://h:8080/') },
    });
    expect(parse('audit', 'tail', '--event-type', 'governance.review')).toMatchObject({
      command: COMMANDS[2],
      eventType: 'governance.review',
      output: 'text',
    });
  });

  it('help for no words (not asked for), help, --help and -h', () => {
    expect(parse()).toEqual({ help: { group: [], asked: false } });
    for (const argv of [['help'], ['--help'], ['pending', '-h']])
      expect(parse(...argv)).toEqual({ help: { group: [], asked: true } });
  });

  it("a group's help for its name alone, the version for --version", () => {
    expect(parse('audit')).toEqual({ help: { group: ['audit'], asked: false } });
    expect(parse('audit', '-h')).toEqual({ help: { group: ['audit'], asked: true } });
    expect(parse('--version')).toBe('version');
  });

  it('says what is wrong', () => {
    expect(usageError('approve')).toBe('approve takes one decision ID');
    expect(usageError('pending', 'x')).toBe('pending takes no arguments, got "x"');
    expect(usageError('audit', 'head')).toBe('unknown command "audit head"');
    expect(usageError('pending', '--comment', 'x')).toBe('--comment does not apply to pending');
    expect(usageError('pending', '-o', 'yaml')).toBe(
      '--output must be json (or left out for text), got "yaml"',
    );
    expect(usageError('pending', '--server', 'localhost:8080')).toBe(
      '--server must be an http:// or https:// URL, got "localhost:8080"',
    );
    expect(usageError('pending', '--server', 'nope')).toMatch(/^--server must be a URL/);
    expect(usageError('pending', '--token', '')).toBe('--token must not be empty');
    expect(usageError('pending', '--frob')).toBe("unknown option '--frob'");
  });
});

describe('which namespace of records, as kubectl has it', () => {
  it('-n/--namespace keeps one namespace; -A/--all-namespaces lists all with their namespace; neither lists all', () => {
    expect(parse('pending', '-n', 'team-a')).toMatchObject({ records: { namespace: 'team-a', all: false } });
    expect(parse('pending', '--namespace=team-a')).toMatchObject({
      records: { namespace: 'team-a', all: false },
    });
    expect(parse('pending', '-A')).toMatchObject({ records: { all: true } });
    expect(parse('pending', '--all-namespaces')).toMatchObject({ records: { all: true } });
    expect(parse('pending')).toMatchObject({ records: { all: false } });
    expect(parse('pending')).not.toHaveProperty('records.namespace');
  });

  it('refuses both at once, a namespace that is no namespace name, and either on a command without records', () => {
    expect(usageError('pending', '-n', 'team-a', '-A')).toBe(
      '--namespace and --all-namespaces exclude each other',
    );
    expect(usageError('pending', '-n', 'Team_A')).toBe('--namespace must be a namespace name, got "Team_A"');
    expect(usageError('approve', 'd-1', '-n', 'team-a')).toBe('--namespace does not apply to approve');
    expect(usageError('approve', 'd-1', '-A')).toBe('--all-namespaces does not apply to approve');
  });
});

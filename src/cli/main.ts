#!/usr/bin/env node
import { ArbiterError } from '../model/index.js';
import { runAuditVerify } from './audit-verify.js';
import { serve } from './serve.js';
import { parseServeOptions, SERVE_HELP } from './serve-options.js';

const HELP = `Usage: arbiter <command> [options]

Commands:
  serve                 serve the API (see: arbiter serve --help)
  audit verify FILE     verify an audit export offline (see: arbiter audit verify --help)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'serve') {
    const options = parseServeOptions(rest, process.env);
    if (options === 'help') {
      process.stdout.write(SERVE_HELP);
      return 0;
    }
    await serve(options);
    return 0;
  }
  if (command === 'audit' && rest[0] === 'verify') return runAuditVerify(rest.slice(1));
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  process.stderr.write(`arbiter: unknown command "${argv.join(' ')}"\n\n${HELP}`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    const message =
      err instanceof ArbiterError || (err instanceof Error && 'code' in err)
        ? (err as Error).message
        : String(err);
    process.stderr.write(`arbiter: ${message}\n`);
    if (!(err instanceof ArbiterError)) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
    process.exitCode = 1;
  },
);

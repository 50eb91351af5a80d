import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { errorText } from '../model/error-text.js';
import {
  formatVerifierKey,
  type NoteVerifierKey,
  parseSigningKey,
  SIGNATURE_TYPE,
} from '../audit/note/note-keys.js';
import { verifierKeyArg } from './verifier-key-arg.js';
import { parseCommandLine, requireFlags, UsageError } from './command-line.js';
import { startWitnessServer } from '../witness/witness-server.js';
import { WitnessState } from '../witness/witness-state.js';

const HELP = `Usage: arbiter witness --log-vkey VKEY... --key FILE --state FILE [--port N] [--host H]

A C2SP tlog-witness for Arbiter audit logs (and any log with signed checkpoints):
POST /add-checkpoint cosigns a checkpoint only if a consistency proof shows that it
extends the last one this witness cosigned for that origin, which it keeps in the state
file. Run it where the cluster's admins cannot reach (another cluster or account): a
history rewritten in the cluster is then refused here.

  --log-vkey VKEY  a log's verifier key (type 0x01; repeatable; its name is the log's
                   origin), or a file holding it
  --key FILE       the witness's key: arbiter audit keygen --witness --origin NAME --out FILE
  --state FILE     the last cosigned checkpoint per origin (created if missing)
  --port N         default 8090; --host default 0.0.0.0

Exit status: 2 usage error; runs until SIGTERM or SIGINT.
`;

export async function runWitness(argv: string[]): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      'log-vkey': { type: 'string', multiple: true },
      key: { type: 'string' },
      state: { type: 'string' },
      port: { type: 'string', default: '8090' },
      host: { type: 'string', default: '0.0.0.0' },
      help: { type: 'boolean', short: 'h' },
    },
    'none',
  );
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  requireFlags(values, ['log-vkey', 'key', 'state']);
  const listenPort = Number(values.port);
  if (!/^\d+$/.test(values.port) || listenPort > 65535)
    throw new UsageError(`--port: ${values.port} is not a port`);
  const logger = pino({ base: { component: 'witness' } });
  let keys: Awaited<ReturnType<typeof readKeys>>;
  try {
    keys = await readKeys(values.key, values['log-vkey']);
  } catch (err) {
    // A key file that is missing or of the wrong kind: the command line names it.
    throw new UsageError(errorText(err));
  }
  const { key, logKeys } = keys;
  const state = await WitnessState.open(values.state);
  const { server, port } = await startWitnessServer(
    { key, logKeys, state, onRefused: (status, message) => logger.warn({ status }, message) },
    listenPort,
    values.host,
  );
  logger.info({ port, origins: [...logKeys.keys()], vkey: formatVerifierKey(key) }, 'witness listening');
  await new Promise<void>((resolve) => {
    const stop = () => server.close(() => resolve());
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return 0;
}

/** The witness's cosigning key and the logs' verifier keys by origin. */
async function readKeys(keyFile: string, logVkeys: string[]) {
  const key = parseSigningKey(await readFile(keyFile, 'utf8'));
  if (key.type !== SIGNATURE_TYPE.cosignatureV1) {
    throw new Error(
      `${keyFile} is a log signing key; make a witness key with arbiter audit keygen --witness`,
    );
  }
  const logKeys = new Map<string, NoteVerifierKey[]>();
  for (const vkey of logVkeys) {
    const parsed = await verifierKeyArg(vkey, { flag: '--log-vkey', role: 'log' });
    logKeys.set(parsed.name, [...(logKeys.get(parsed.name) ?? []), parsed]);
  }
  return { key, logKeys };
}

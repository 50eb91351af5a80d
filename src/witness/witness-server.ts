import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NoteSigningKey, NoteVerifierKey } from '../audit/note/note-keys.js';
import { signatureLine } from '../audit/note/signed-note.js';
import { TLOG_SIZE_CONTENT_TYPE } from '../audit/witnessing/checkpoint-witness.js';
import {
  type AddCheckpointOutcome,
  BadRequestError,
  decideAddCheckpoint,
  parseAddCheckpoint,
} from './add-checkpoint.js';
import type { WitnessState } from './witness-state.js';

export interface WitnessSettings {
  /** The witness's cosigning key (signature type 0x04). */
  key: NoteSigningKey;
  /** Trusted keys of each log, by origin. */
  logKeys: ReadonlyMap<string, readonly NoteVerifierKey[]>;
  state: WitnessState;
  now?: () => Date;
  /** Told of every refusal (a 409 or 422 may be evidence of a log rewriting its history). */
  onRefused?: (status: number, message: string) => void;
}

const MAX_BODY_BYTES = 64 * 1024;

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequestError('request body larger than 64 KiB');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A C2SP tlog-witness: POST /add-checkpoint. It cosigns a checkpoint only when it
 * extends the last one it cosigned for that origin (state checked and persisted in one
 * turn), and answers with one cosignature/v1 line.
 */
export async function addCheckpoint(
  settings: WitnessSettings,
  body: string,
): Promise<AddCheckpointOutcome & { cosignature?: string }> {
  const request = parseAddCheckpoint(body);
  // The origin decides which state to lock; a malformed note is refused inside decide.
  const origin = body.slice(body.indexOf('\n\n') + 2).split('\n', 1)[0] ?? '';
  return settings.state.update<AddCheckpointOutcome & { cosignature?: string }>(origin, (latest) => {
    const outcome = decideAddCheckpoint(request, settings.logKeys, latest);
    if (outcome.status !== 200) return { result: outcome };
    const timestamp = Math.floor((settings.now?.() ?? new Date()).getTime() / 1000);
    const cosignature = signatureLine(outcome.text, settings.key, timestamp);
    return {
      next: { size: outcome.checkpoint.size, root: outcome.checkpoint.root },
      result: { ...outcome, cosignature },
    };
  });
}

export function startWitnessServer(
  settings: WitnessSettings,
  port: number,
  host = '0.0.0.0',
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    void handle(settings, req, res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}

async function handle(settings: WitnessSettings, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.url !== '/add-checkpoint') return send(res, 404, 'not found\n');
  if (req.method !== 'POST') return send(res, 405, 'use POST\n');
  try {
    const outcome = await addCheckpoint(settings, await readBody(req));
    if (outcome.status === 200) return send(res, 200, outcome.cosignature!);
    settings.onRefused?.(outcome.status, outcome.message);
    if (outcome.status === 409) return send(res, 409, `${outcome.size}\n`, TLOG_SIZE_CONTENT_TYPE);
    return send(res, outcome.status, `${outcome.message}\n`);
  } catch (err) {
    if (err instanceof BadRequestError) return send(res, 400, `${err.message}\n`);
    return send(res, 500, 'the witness could not record the checkpoint\n');
  }
}

import type { TreeHash } from '../merkle/tree-hash.js';
import type { NoteVerifierKey } from '../note/note-keys.js';
import { type OpenedNote, openNote } from '../note/signed-note.js';
import {
  type CheckpointWitness,
  type CosignRequest,
  TLOG_SIZE_CONTENT_TYPE,
  WitnessFailure,
  type WitnessFailureReason,
} from './checkpoint-witness.js';

export interface HttpWitnessSettings {
  /** The witness's base URL; requests go to `<url>/add-checkpoint`. */
  url: string;
  /** The witness's cosigning key: its answer must verify with it. */
  key: NoteVerifierKey;
  /** Bound on one request (default 10 s). */
  timeoutMs?: number;
}

const MAX_ANSWER_BYTES = 64 * 1024;

/** A witness's answer: its status, Content-Type (null without one) and body. */
interface WitnessAnswer {
  status: number;
  type: string | null;
  body: string;
}

/**
 * A C2SP tlog-witness over HTTP. It proves consistency from the size the witness last
 * cosigned: the last one this process saw it cosign, else the log's previous signed
 * checkpoint; a 409 naming another size is retried once from that size.
 */
export class HttpWitness implements CheckpointWitness {
  private knownSize: number | undefined;
  private readonly endpoint: string;

  constructor(private readonly settings: HttpWitnessSettings) {
    this.endpoint = `${settings.url.replace(/\/+$/, '')}/add-checkpoint`;
  }

  get name(): string {
    return this.settings.key.name;
  }

  async cosign(request: CosignRequest): Promise<string> {
    let oldSize = this.knownSize ?? request.previousSize;
    for (let retried = false; ; retried = true) {
      if (oldSize > request.size) {
        throw this.failure(
          'refused',
          `the witness has cosigned size ${oldSize}, beyond this checkpoint's ${request.size}`,
        );
      }
      const proof = await request.tree.consistencyProof(oldSize, request.size);
      const answer = await this.post(requestBody(oldSize, proof, request.note));
      if (answer.status === 200) {
        const line = this.checkCosignature(request.note, answer.body);
        this.knownSize = request.size;
        return line;
      }
      const witnessSize = answer.status === 409 ? sizeOf(answer) : undefined;
      if (witnessSize !== undefined && witnessSize !== oldSize && !retried) {
        oldSize = witnessSize;
        this.knownSize = witnessSize;
        continue;
      }
      throw this.failure(reasonOf(answer.status), refusalMessage(answer, oldSize));
    }
  }

  private async post(body: string): Promise<WitnessAnswer> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? 10_000),
        redirect: 'error',
      });
      text = await response.text();
    } catch (err) {
      throw this.failure('unreachable', `POST ${this.endpoint}: ${(err as Error).message}`);
    }
    if (Buffer.byteLength(text) > MAX_ANSWER_BYTES) {
      throw this.failure('bad_cosignature', `the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    return { status: response.status, type: response.headers.get('content-type'), body: text };
  }

  /** The answer's lines that are valid cosignatures of the note by this witness's key. */
  private checkCosignature(note: string, answer: string): string {
    const lines = answer.split('\n').filter((line) => line !== '');
    const valid = lines.map((line) => `${line}\n`).filter((line) => this.cosigns(note, line));
    if (valid.length === 0 || valid.length !== lines.length) {
      throw this.failure('bad_cosignature', 'the answer is not a valid cosignature by the witness key');
    }
    return valid.join('');
  }

  /** Whether this signature line is a valid cosignature of the note by the witness's key. */
  private cosigns(note: string, line: string): boolean {
    let opened: OpenedNote;
    try {
      opened = openNote(`${note}${line}`, [this.settings.key]);
    } catch {
      return false;
    }
    return opened.verified.length === 1;
  }

  private failure(reason: WitnessFailureReason, message: string): WitnessFailure {
    return new WitnessFailure(this.name, reason, `witness ${this.name}: ${message}`);
  }
}

function requestBody(oldSize: number, proof: readonly TreeHash[], note: string): string {
  return `old ${oldSize}\n${proof.map((hash) => `${hash.toString('base64')}\n`).join('')}\n${note}`;
}

/** The witness's last cosigned size from a 409 answer, when it gave one. */
function sizeOf(answer: WitnessAnswer): number | undefined {
  if (!answer.type?.startsWith(TLOG_SIZE_CONTENT_TYPE)) return undefined;
  const match = /^(0|[1-9][0-9]{0,15})\n?$/.exec(answer.body);
  const size = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(size) ? size : undefined;
}

function reasonOf(status: number): WitnessFailureReason {
  if (status === 409 || status === 422) return 'refused';
  if (status >= 400 && status < 500) return 'rejected';
  return 'unreachable';
}

function refusalMessage(answer: WitnessAnswer, oldSize: number): string {
  const said = answer.body.trim().slice(0, 300);
  if (answer.status === 409) {
    return `refused (409) a checkpoint proven from size ${oldSize}: it has cosigned another history (${said})`;
  }
  if (answer.status === 422) {
    return `refused (422): the history it cosigned does not extend to this checkpoint (${said})`;
  }
  return `answered ${answer.status}: ${said}`;
}

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { ServingCertificates, ServingPair } from '../admission/serving-certificates.js';
import { readKeyPair } from '../admission/tls/index.js';
import { CoalescedTask } from './coalesced-task.js';
import { ProblemLog } from './problem-log.js';
import { ServingState } from './serving-state.js';

export interface DirectoryServingCertificatesSettings {
  /** How often the files are read again. */
  pollIntervalMs: number;
  /** How long start() waits for a first pair before it logs and returns. */
  startTimeoutMs: number;
}

export const DEFAULT_DIRECTORY_CERTIFICATES_SETTINGS: DirectoryServingCertificatesSettings = {
  pollIntervalMs: 5_000,
  startTimeoutMs: 30_000,
};

export interface DirectoryServingCertificatesDeps {
  dir: string;
  logger: Logger;
  settings?: Partial<DirectoryServingCertificatesSettings>;
}

/**
 * DIR/tls.crt and DIR/tls.key, as cert-manager's Secret mounted as a volume. The kubelet
 * swaps both at once by re-pointing a `..data` symlink, which fs.watch does not reliably
 * report, so the files' content is polled. The caBundle is someone else's (cert-manager's
 * cainjector): caBundle() is undefined.
 */
export class DirectoryServingCertificates implements ServingCertificates {
  private readonly settings: DirectoryServingCertificatesSettings;
  private readonly state: ServingState;
  private readonly task: CoalescedTask;
  private readonly problems: ProblemLog;

  constructor(private readonly deps: DirectoryServingCertificatesDeps) {
    this.settings = { ...DEFAULT_DIRECTORY_CERTIFICATES_SETTINGS, ...deps.settings };
    this.state = new ServingState(deps.logger);
    this.problems = new ProblemLog(deps.logger, { dir: deps.dir });
    this.task = new CoalescedTask(
      () => this.refresh(),
      this.settings.pollIntervalMs,
      (err) =>
        this.problems.report(
          'load',
          'error',
          'cannot load the admission certificate; keeping the current one',
          err,
        ),
    );
  }

  current(): ServingPair | undefined {
    return this.state.current();
  }

  caBundle(): undefined {
    return undefined;
  }

  onChange(listener: () => void): () => void {
    return this.state.onChange(listener);
  }

  async start(): Promise<void> {
    this.task.schedule(0);
    if (!(await this.state.waitLoaded(this.settings.startTimeoutMs))) {
      this.deps.logger.warn(
        { dir: this.deps.dir, waited_ms: this.settings.startTimeoutMs },
        'no admission serving certificate in the folder yet; still trying',
      );
    }
  }

  close(): Promise<void> {
    return this.task.close();
  }

  /** A missing or broken pair throws, keeping the previous one (the kubelet may be mid-swap). */
  private async refresh(): Promise<void> {
    try {
      const files = { cert: join(this.deps.dir, 'tls.crt'), key: join(this.deps.dir, 'tls.key') };
      const [certPem, keyPem] = await Promise.all([
        readFile(files.cert, 'utf8'),
        readFile(files.key, 'utf8'),
      ]);
      const current = this.state.current();
      if (current?.certPem === certPem && current.keyPem === keyPem) return;
      const { notAfter } = readKeyPair(certPem, keyPem, files);
      this.state.set({ certPem, keyPem }, undefined);
      this.problems.resolved('load');
      this.deps.logger.info(
        { dir: this.deps.dir, not_after: notAfter },
        'serving a new admission certificate',
      );
    } finally {
      this.task.schedule();
    }
  }
}

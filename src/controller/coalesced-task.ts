/**
 * Runs a task once for a burst of requests: `schedule()` during a pending or running
 * run only asks for one more run afterwards. Runs never overlap.
 */
export class CoalescedTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;

  constructor(
    private readonly task: () => Promise<void> | void,
    private readonly delayMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  schedule(delayMs = this.delayMs): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => void this.run(), delayMs);
  }

  /** Waits for the current run, if any; a run it scheduled is a timer until it starts. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.idle();
  }

  private async run(): Promise<void> {
    this.timer = undefined;
    this.again = false;
    const running = (async () => {
      try {
        await this.task();
      } catch (err) {
        this.onError(err);
      }
    })();
    this.running = running;
    await running;
    this.running = undefined;
    if (this.again) this.schedule();
  }
}

// A one-time report from the code that finishes something (a relayed stream, an image stream) to
// the code that records it (the billing layer, src/billing/metered.ts), answered: the finisher
// sends its report and waits for the recording; the recorder takes the report and answers with its
// recording's promise. So the finisher never imports the recorder, and still ends only once its
// report is recorded (a stream closes after its usage record is durable).

export class Handoff<T> {
  /** Resolves with the report, once sent. */
  readonly received: Promise<T>;
  #deliver: (report: T) => void = () => undefined;
  #answer: (recording: Promise<void>) => void = () => undefined;
  readonly #recorded: Promise<void>;
  #sent = false;

  constructor() {
    this.received = new Promise<T>((resolve) => {
      this.#deliver = resolve;
    });
    this.#recorded = new Promise<void>((resolve, reject) => {
      this.#answer = (recording) => {
        recording.then(resolve, reject);
      };
    });
  }

  /**
   * The finisher: sends `report` (the first call wins; later ones send nothing) and resolves when
   * it is recorded, or rejects with the recording's error.
   */
  send(report: T): Promise<void> {
    if (!this.#sent) {
      this.#sent = true;
      this.#deliver(report);
    }
    return this.#recorded;
  }

  /** The recorder: answers the report with its recording. */
  answer(recording: Promise<void>): void {
    this.#answer(recording);
  }
}

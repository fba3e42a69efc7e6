// A one-time report from the code that finishes something (a relayed stream, an image stream) to
// the code that records it (the billing layer, src/billing/layer.ts), answered: the finisher
// sends its report and waits for the recording; the recorder takes the report and answers with its
// recording's promise. So the finisher never imports the recorder, and still ends only once its
// report is recorded (a stream closes after its usage record is durable). The recording resolves
// with what the recorder has to say back (`A`: the billing layer answers with the settled cost).

export class Handoff<T, A = void> {
  /** Resolves with the report, once sent. */
  readonly received: Promise<T>;
  #deliver: (report: T) => void = () => undefined;
  #answer: (recording: Promise<A>) => void = () => undefined;
  readonly #recorded: Promise<A>;
  #sent = false;

  constructor() {
    this.received = new Promise<T>((resolve) => {
      this.#deliver = resolve;
    });
    this.#recorded = new Promise<A>((resolve, reject) => {
      this.#answer = (recording) => {
        recording.then(resolve, reject);
      };
    });
  }

  /**
   * The finisher: sends `report` (the first call wins; later ones send nothing) and resolves when
   * it is recorded, or rejects with the recording's error.
   */
  send(report: T): Promise<A> {
    if (!this.#sent) {
      this.#sent = true;
      this.#deliver(report);
    }
    return this.#recorded;
  }

  /** The recorder: answers the report with its recording. */
  answer(recording: Promise<A>): void {
    this.#answer(recording);
  }
}

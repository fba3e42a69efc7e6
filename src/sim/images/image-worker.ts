// The simulator's image thread (a Worker started by thread.ts): runs image requests one after
// another and sends each event back as it is made. Between events it lets its own event loop run,
// so a cancel from a client that left stops the request at the next image.
import { idleCollector } from "../../base/thread.ts";
import { type SimImageRequest, SimInputError, simImages } from "./engine.ts";
import type { ImageThreadReply, ImageThreadRequest } from "./thread.ts";

declare const self: Worker;

const cancelled = new Set<number>();
let chain: Promise<void> = Promise.resolve();
let running = 0;
// Decoded uploads and made images would stay in this thread's heap after a burst (base/thread.ts).
const heap = idleCollector(1000);

self.addEventListener("message", (event: MessageEvent<ImageThreadRequest>) => {
  const message = event.data;
  if (message.kind === "cancel") {
    cancelled.add(message.id);
    return;
  }
  running++;
  heap.busy();
  chain = chain.then(() => run(message.id, message.request));
});

function send(reply: ImageThreadReply): void {
  self.postMessage(reply);
}

async function run(id: number, request: SimImageRequest): Promise<void> {
  try {
    if (cancelled.has(id)) return;
    for await (const event of simImages(request)) {
      await Bun.sleep(0); // a cancel sent meanwhile is read here
      if (cancelled.has(id)) return;
      send({ id, event });
    }
    send({ id, done: true });
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown.message : String(thrown);
    send({ id, error, input: thrown instanceof SimInputError });
  } finally {
    cancelled.delete(id);
    if (--running === 0) heap.done();
  }
}

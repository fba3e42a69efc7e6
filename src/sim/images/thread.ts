// The simulator's image work off the event loop: decoding uploads, painting and encoding run in
// the image thread (a Worker, image-worker.ts), one request after another, so a 4096×4096 edit
// never stalls the process that asked for it (the gateway itself, for a "sim" channel) and only
// one request's pixels are held at a time. The thread starts at the first image request and is
// not kept: idle, it never holds a process open; if it dies, the requests it had fail and the
// next one starts another.
import { RequestThread } from "../../base/thread.ts";
import { type SimImageEvent, type SimImageRequest, SimInputError } from "./engine.ts";

/** The argument that tells the compiled executable it was started as the image thread (src/main.ts). */
export const IMAGE_THREAD_ROLE = "--sim-image-thread";

export type ImageThreadRequest =
  | { kind: "run"; id: number; request: SimImageRequest }
  | { kind: "cancel"; id: number };
export type ImageThreadReply =
  | { id: number; event: SimImageEvent }
  | { id: number; done: true }
  | { id: number; error: string; input: boolean };

const thread = new RequestThread<ImageThreadRequest, ImageThreadReply>(
  new URL("./image-worker.ts", import.meta.url),
  IMAGE_THREAD_ROLE,
  "simulator's image thread",
);

/**
 * `simImages(request)` run in the image thread: the same events in the same order, and the same
 * errors (a SimInputError for a refused input). Ending the iteration early cancels the request.
 */
export async function* simImagesOffThread(request: SimImageRequest): AsyncGenerator<SimImageEvent> {
  const replies: ImageThreadReply[] = [];
  let wake: () => void = () => undefined;
  const id = thread.open({
    reply(reply) {
      replies.push(reply);
      wake();
    },
    stopped(error) {
      replies.push({ id, error: error.message, input: false });
      wake();
    },
  });
  let finished = false;
  try {
    thread.post({ kind: "run", id, request });
    for (;;) {
      const reply = replies.shift();
      if (reply === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      if ("event" in reply) {
        yield reply.event;
        continue;
      }
      finished = true;
      if ("done" in reply) return;
      throw reply.input ? new SimInputError(reply.error) : new Error(reply.error);
    }
  } finally {
    thread.close(id);
    if (!finished) thread.post({ kind: "cancel", id });
  }
}

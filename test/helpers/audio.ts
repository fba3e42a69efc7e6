// Audio files for the speech tests: PCM WAV of a given length (a tone, 16-bit mono) written by
// hand (RIFF is a 44-byte header), and MP3 encoded by lamejs, the simulator's own encoder.
import { Mp3Encoder } from "@breezystack/lamejs";

/** A 16-bit mono PCM WAV of `seconds` at `rate` Hz. */
export function wavFile(seconds: number, rate = 16_000): Uint8Array {
  const samples = Math.round(seconds * rate);
  const data = samples * 2;
  const b = Buffer.alloc(44 + data);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVE", 8);
  b.write("fmt ", 12);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(data, 40);
  for (let i = 0; i < samples; i++) b.writeInt16LE(Math.round(Math.sin(i / 9) * 6000), 44 + i * 2);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** An MP3 of `seconds` (mono, 24 kHz, 64 kbit/s). */
export function mp3File(seconds: number): Uint8Array {
  const rate = 24_000;
  const encoder = new Mp3Encoder(1, rate, 64);
  const pcm = new Int16Array(Math.round(seconds * rate));
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(Math.sin(i / 7) * 5000);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < pcm.length; i += 1152)
    parts.push(new Uint8Array(encoder.encodeBuffer(pcm.subarray(i, i + 1152))));
  parts.push(new Uint8Array(encoder.flush()));
  return new Uint8Array(Buffer.concat(parts));
}

// Embedded WebAssembly files: a `with { type: "file" }` import gives the file's path (inside the
// compiled executable too).
declare module "*.wasm" {
  const path: string;
  export default path;
}
